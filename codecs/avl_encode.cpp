#include "codecs/avl_encode.hpp"

#include <cstring>

#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/crc16.hpp"

namespace tgw::codecs {
namespace {

struct widths {
  std::size_t event_id;
  std::size_t count;
  std::size_t id;
  bool generation_type;
  bool nx;
};

bool widths_of(codec_id codec, widths& w) noexcept {
  switch (codec) {
    case codec_id::codec8:
      w = {1, 1, 1, false, false};
      return true;
    case codec_id::codec8e:
      w = {2, 2, 2, false, true};
      return true;
    case codec_id::codec16:
      w = {2, 1, 2, true, false};
      return true;
    default:
      return false;
  }
}

class writer {
 public:
  explicit writer(std::vector<std::uint8_t>& out) : out_(out) {}

  void u8(std::uint64_t v) { out_.push_back(static_cast<std::uint8_t>(v)); }
  void u16(std::uint64_t v) {
    std::uint8_t b[2];
    store_be16(b, static_cast<std::uint16_t>(v));
    out_.insert(out_.end(), b, b + 2);
  }
  void u32(std::uint64_t v) {
    std::uint8_t b[4];
    store_be32(b, static_cast<std::uint32_t>(v));
    out_.insert(out_.end(), b, b + 4);
  }
  void u64(std::uint64_t v) {
    std::uint8_t b[8];
    store_be64(b, v);
    out_.insert(out_.end(), b, b + 8);
  }
  void uint(std::size_t width, std::uint64_t v) {
    switch (width) {
      case 1:
        u8(v);
        break;
      case 2:
        u16(v);
        break;
      case 4:
        u32(v);
        break;
      default:
        u64(v);
        break;
    }
  }
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }

 private:
  std::vector<std::uint8_t>& out_;
};

bool fits(std::uint64_t value, std::size_t bytes) noexcept {
  return bytes >= 8 || value < (std::uint64_t{1} << (8 * bytes));
}

errc check_record(const widths& w, const avl_record_data& r) noexcept {
  if (!fits(r.event_io_id, w.event_id)) return errc::value_out_of_range;
  std::size_t per_width[5] = {};
  for (const io_value& v : r.io) {
    if (!fits(v.id, w.id)) return errc::value_out_of_range;
    switch (v.width) {
      case 0:
        if (!w.nx || v.bytes.size() > 0xFFFF) return errc::value_out_of_range;
        ++per_width[4];
        break;
      case 1:
      case 2:
        if (!fits(v.value, v.width)) return errc::value_out_of_range;
        ++per_width[v.width - 1];
        break;
      case 4:
        if (!fits(v.value, 4)) return errc::value_out_of_range;
        ++per_width[2];
        break;
      case 8:
        ++per_width[3];
        break;
      default:
        return errc::value_out_of_range;
    }
  }
  for (std::size_t n : per_width)
    if (!fits(n, w.count)) return errc::value_out_of_range;
  if (!fits(r.io.size(), w.count)) return errc::value_out_of_range;
  return errc::ok;
}

void write_record(writer& out, const widths& w, const avl_record_data& r) {
  out.u64(r.timestamp_ms);
  out.u8(r.priority);
  out.u32(static_cast<std::uint32_t>(r.longitude));
  out.u32(static_cast<std::uint32_t>(r.latitude));
  out.u16(static_cast<std::uint16_t>(r.altitude));
  out.u16(r.angle);
  out.u8(r.satellites);
  out.u16(r.speed);
  out.uint(w.event_id, r.event_io_id);
  if (w.generation_type) out.u8(r.generation_type);
  out.uint(w.count, r.io.size());
  for (const std::uint8_t width :
       {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{4}, std::uint8_t{8}}) {
    std::size_t n = 0;
    for (const io_value& v : r.io) n += v.width == width;
    out.uint(w.count, n);
    for (const io_value& v : r.io) {
      if (v.width != width) continue;
      out.uint(w.id, v.id);
      out.uint(width, v.value);
    }
  }
  if (w.nx) {
    std::size_t n = 0;
    for (const io_value& v : r.io) n += v.width == 0;
    out.u16(n);
    for (const io_value& v : r.io) {
      if (v.width != 0) continue;
      out.u16(v.id);
      out.u16(v.bytes.size());
      out.bytes(v.bytes);
    }
  }
}

}  // namespace

errc encode_avl_data(codec_id codec, std::span<const avl_record_data> records,
                     std::vector<std::uint8_t>& out) {
  widths w{};
  if (!widths_of(codec, w)) return errc::wrong_codec;
  if (records.empty() || records.size() > 255) return errc::value_out_of_range;
  for (const avl_record_data& r : records)
    if (const errc e = check_record(w, r); e != errc::ok) return e;
  writer wr(out);
  wr.u8(static_cast<std::uint8_t>(codec));
  wr.u8(records.size());
  for (const avl_record_data& r : records) write_record(wr, w, r);
  wr.u8(records.size());
  return errc::ok;
}

errc encode_avl_frame(codec_id codec, std::span<const avl_record_data> records,
                      std::vector<std::uint8_t>& out) {
  const std::size_t start = out.size();
  out.resize(start + tcp_frame_header, 0);
  if (const errc e = encode_avl_data(codec, records, out); e != errc::ok) {
    out.resize(start);
    return e;
  }
  const std::size_t length = out.size() - start - tcp_frame_header;
  store_be32(out.data() + start + 4, static_cast<std::uint32_t>(length));
  const std::uint16_t crc = crc16_ibm({out.data() + start + tcp_frame_header, length});
  writer(out).u32(crc);
  return errc::ok;
}

errc encode_udp_datagram(std::uint16_t packet_id, std::uint8_t avl_packet_id, const imei& device,
                         codec_id codec, std::span<const avl_record_data> records,
                         std::vector<std::uint8_t>& out) {
  const std::size_t start = out.size();
  writer w(out);
  w.u16(0);
  w.u16(packet_id);
  w.u8(0x01);
  w.u8(avl_packet_id);
  w.u16(device.str().size());
  w.bytes({reinterpret_cast<const std::uint8_t*>(device.str().data()), device.str().size()});
  if (const errc e = encode_avl_data(codec, records, out); e != errc::ok) {
    out.resize(start);
    return e;
  }
  const std::size_t length = out.size() - start - 2;
  if (length > 0xFFFF) {
    out.resize(start);
    return errc::value_out_of_range;
  }
  store_be16(out.data() + start, static_cast<std::uint16_t>(length));
  return errc::ok;
}

void encode_imei_packet(const imei& device, std::vector<std::uint8_t>& out) {
  writer w(out);
  w.u16(device.str().size());
  w.bytes({reinterpret_cast<const std::uint8_t*>(device.str().data()), device.str().size()});
}

std::vector<avl_record_data> to_record_data(const avl_packet& packet) {
  std::vector<avl_record_data> result;
  result.reserve(packet.records.size());
  for (const avl_record& r : packet.records) {
    avl_record_data& d = result.emplace_back();
    d.timestamp_ms = r.timestamp_ms;
    d.priority = r.priority;
    d.longitude = r.longitude;
    d.latitude = r.latitude;
    d.altitude = r.altitude;
    d.angle = r.angle;
    d.satellites = r.satellites;
    d.speed = r.speed;
    d.event_io_id = r.event_io_id;
    d.generation_type = r.generation_type;
    for (const io_element& e : packet.io_of(r)) {
      io_value& v = d.io.emplace_back();
      v.id = e.id;
      if (e.variable) {
        v.width = 0;
        const auto b = packet.value_bytes(e);
        v.bytes.assign(b.begin(), b.end());
      } else {
        v.width = static_cast<std::uint8_t>(e.size);
        v.value = e.value;
      }
    }
  }
  return result;
}

}  // namespace tgw::codecs
