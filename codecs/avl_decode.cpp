#include "codecs/avl_decode.hpp"

#include "codecs/byte_order.hpp"
#include "codecs/crc16.hpp"

namespace tgw::codecs {
namespace {

constexpr std::size_t gps_element_size = 8 + 1 + 4 + 4 + 2 + 2 + 1 + 2;

// The three AVL codecs differ only in field widths; one template decodes them all so
// each instantiation's inner loops run with constant widths.
template <std::size_t EventIdBytes, std::size_t CountBytes, std::size_t IdBytes,
          bool HasGenerationType, bool HasNx>
struct layout {
  static constexpr std::size_t event_id_bytes = EventIdBytes;
  static constexpr std::size_t count_bytes = CountBytes;
  static constexpr std::size_t id_bytes = IdBytes;
  static constexpr bool has_generation_type = HasGenerationType;
  static constexpr bool has_nx = HasNx;
};

using codec8_layout = layout<1, 1, 1, false, false>;
using codec8e_layout = layout<2, 2, 2, false, true>;
using codec16_layout = layout<2, 1, 2, true, false>;

template <std::size_t Bytes>
std::uint16_t load_small(const std::uint8_t* p) noexcept {
  if constexpr (Bytes == 1)
    return *p;
  else
    return load_be16(p);
}

class record_reader {
 public:
  record_reader(const std::uint8_t* base, std::size_t pos, std::size_t end, avl_packet& out)
      : base_(base), pos_(pos), end_(end), out_(out) {}

  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }

  template <class Layout>
  decode_status read_record() noexcept {
    if (end_ - pos_ < gps_element_size) return {errc::truncated, pos_};
    avl_record& r = out_.records.emplace_back();
    const std::uint8_t* p = base_ + pos_;
    r.timestamp_ms = load_be64(p);
    r.priority = p[8];
    r.longitude = static_cast<std::int32_t>(load_be32(p + 9));
    r.latitude = static_cast<std::int32_t>(load_be32(p + 13));
    r.altitude = static_cast<std::int16_t>(load_be16(p + 17));
    r.angle = load_be16(p + 19);
    r.satellites = p[21];
    r.speed = load_be16(p + 22);
    pos_ += gps_element_size;

    constexpr std::size_t header =
        Layout::event_id_bytes + (Layout::has_generation_type ? 1 : 0) + Layout::count_bytes;
    if (end_ - pos_ < header) return {errc::truncated, pos_};
    p = base_ + pos_;
    r.event_io_id = load_small<Layout::event_id_bytes>(p);
    p += Layout::event_id_bytes;
    if constexpr (Layout::has_generation_type) r.generation_type = *p++;
    r.declared_io_total = load_small<Layout::count_bytes>(p);
    pos_ += header;

    r.io_begin = static_cast<std::uint32_t>(out_.io.size());
    if (auto s = read_fixed_group<Layout, 1>(); !s.ok()) return s;
    if (auto s = read_fixed_group<Layout, 2>(); !s.ok()) return s;
    if (auto s = read_fixed_group<Layout, 4>(); !s.ok()) return s;
    if (auto s = read_fixed_group<Layout, 8>(); !s.ok()) return s;
    if constexpr (Layout::has_nx)
      if (auto s = read_variable_group(); !s.ok()) return s;
    // `r` is still valid: the groups above append to `io`, never to `records`.
    r.io_count = static_cast<std::uint32_t>(out_.io.size()) - r.io_begin;
    return {errc::ok, pos_};
  }

 private:
  template <class Layout, std::size_t Width>
  decode_status read_fixed_group() noexcept {
    if (end_ - pos_ < Layout::count_bytes) return {errc::truncated, pos_};
    const std::size_t count = load_small<Layout::count_bytes>(base_ + pos_);
    const std::size_t count_pos = pos_;
    pos_ += Layout::count_bytes;
    constexpr std::size_t element = Layout::id_bytes + Width;
    // One bounds check for the whole group keeps the per-element loop branch-free (no
    // overflow: count < 2^16 and element <= 10).
    if (end_ - pos_ < count * element) return {errc::truncated, count_pos};
    const std::uint8_t* const group_end = base_ + pos_ + count * element;
    for (const std::uint8_t* p = base_ + pos_; p != group_end; p += element) {
      std::uint64_t value;
      if constexpr (Width == 1)
        value = p[Layout::id_bytes];
      else if constexpr (Width == 2)
        value = load_be16(p + Layout::id_bytes);
      else if constexpr (Width == 4)
        value = load_be32(p + Layout::id_bytes);
      else
        value = load_be64(p + Layout::id_bytes);
      const auto offset =
          static_cast<std::uint32_t>(static_cast<std::size_t>(p - base_) + Layout::id_bytes);
      // Built whole: emplace_back() and field stores would zero the element first.
      out_.io.push_back(io_element{value, offset, load_small<Layout::id_bytes>(p),
                                   static_cast<std::uint16_t>(Width), false});
    }
    pos_ += count * element;
    return {errc::ok, pos_};
  }

  decode_status read_variable_group() noexcept {
    if (end_ - pos_ < 2) return {errc::truncated, pos_};
    const std::size_t count = load_be16(base_ + pos_);
    pos_ += 2;
    for (std::size_t i = 0; i < count; ++i) {
      if (end_ - pos_ < 4) return {errc::truncated, pos_};
      const std::uint16_t id = load_be16(base_ + pos_);
      const std::uint16_t length = load_be16(base_ + pos_ + 2);
      if (end_ - pos_ - 4 < length) return {errc::truncated, pos_ + 2};
      io_element& e = out_.io.emplace_back();
      e.id = id;
      e.size = length;
      e.offset = static_cast<std::uint32_t>(pos_ + 4);
      e.variable = true;
      pos_ += 4U + length;
    }
    return {errc::ok, pos_};
  }

  const std::uint8_t* base_;
  std::size_t pos_;
  std::size_t end_;
  avl_packet& out_;
};

template <class Layout>
decode_status read_records(record_reader& reader, std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i)
    if (auto s = reader.read_record<Layout>(); !s.ok()) return s;
  return {errc::ok, reader.pos()};
}

}  // namespace

decode_status decode_avl_data(std::span<const std::uint8_t> input, std::size_t begin,
                              avl_packet& out) noexcept {
  out.records.clear();
  out.io.clear();
  out.bytes = input;
  const std::size_t end = input.size();
  if (begin > end || end - begin < 3) return {errc::truncated, begin};
  const std::uint8_t codec = input[begin];
  out.codec = codec;
  // The codec byte comes before the count: a command frame or garbage with a zero
  // count is a codec fault, not an empty AVL packet.
  if (!is_avl_codec(codec))
    return {is_command_codec(codec) ? errc::wrong_codec : errc::unknown_codec, begin};
  const std::size_t count = input[begin + 1];
  if (count == 0) return {errc::zero_records, begin + 1};

  record_reader reader(input.data(), begin + 2, end, out);
  decode_status s;
  switch (codec) {
    case 0x08:
      s = read_records<codec8_layout>(reader, count);
      break;
    case 0x8E:
      s = read_records<codec8e_layout>(reader, count);
      break;
    case 0x10:
      s = read_records<codec16_layout>(reader, count);
      break;
    default:
      return {is_command_codec(codec) ? errc::wrong_codec : errc::unknown_codec, begin};
  }
  if (!s.ok()) return s;
  const std::size_t pos = reader.pos();
  if (pos == end) return {errc::truncated, pos};
  if (pos + 1 != end) return {errc::length_mismatch, pos};
  if (input[pos] != count) return {errc::record_count_mismatch, pos};
  return {errc::ok, end};
}

decode_status decode_avl_frame(std::span<const std::uint8_t> frame, avl_packet& out,
                               crc_policy crc) noexcept {
  out.clear();
  out.bytes = frame;
  if (frame.size() < tcp_frame_header) return {errc::truncated, frame.size()};
  for (std::size_t i = 0; i < 4; ++i)
    if (frame[i] != 0) return {errc::bad_preamble, i};
  const std::size_t length = load_be32(frame.data() + 4);
  if (length < 3) return {errc::length_too_small, 4};
  if (frame.size() - tcp_frame_header - tcp_frame_trailer != length) {
    if (frame.size() < tcp_frame_header + length + tcp_frame_trailer)
      return {errc::truncated, frame.size()};
    return {errc::length_mismatch, 4};
  }
  const std::size_t data_end = tcp_frame_header + length;
  out.has_crc = true;
  out.crc_field = load_be32(frame.data() + data_end);
  out.crc_computed = crc16_ibm(frame.subspan(tcp_frame_header, length));
  if (crc == crc_policy::strict && !out.crc_ok()) return {errc::bad_crc, data_end};

  const decode_status s = decode_avl_data(frame.first(data_end), tcp_frame_header, out);
  out.bytes = frame;
  if (!s.ok()) return s;
  return {errc::ok, frame.size()};
}

}  // namespace tgw::codecs
