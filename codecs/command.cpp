#include "codecs/command.hpp"

#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/crc16.hpp"

#include <cstring>

namespace tgw::codecs {
namespace {

// codec id, quantity, type, size u32 ... quantity: the data size is the inner size
// plus these eight bytes.
constexpr std::size_t command_overhead = 8;

bool type_allowed(std::uint8_t codec, std::uint8_t type) noexcept {
  using namespace message_type;
  switch (codec) {
    case 0x0C:
      return type == command || type == response || type == camera;
    case 0x0D:
      // The wiki's own Codec 13 example uses 05 where the text says 06.
      return type == command || type == response;
    case 0x0E:
      return type == command || type == response || type == nack;
    case 0x0F:
      return type == message;
    default:
      return false;
  }
}

std::size_t prefix_bytes(std::uint8_t codec) noexcept {
  switch (codec) {
    case 0x0D:
      return 4;
    case 0x0E:
      return 8;
    case 0x0F:
      return 12;
    default:
      return 0;
  }
}

}  // namespace

bool command_message::payload_is_text() const noexcept {
  for (std::uint8_t b : payload)
    if ((b < 0x20 || b > 0x7E) && b != '\r' && b != '\n' && b != '\t') return false;
  return true;
}

decode_status decode_command_frame(std::span<const std::uint8_t> frame, command_message& out,
                                   crc_policy crc) noexcept {
  out = command_message{};
  if (frame.size() < tcp_frame_header) return {errc::truncated, frame.size()};
  for (std::size_t i = 0; i < 4; ++i)
    if (frame[i] != 0) return {errc::bad_preamble, i};
  const std::size_t length = load_be32(frame.data() + 4);
  if (length < command_overhead) return {errc::length_too_small, 4};
  if (frame.size() - tcp_frame_header - tcp_frame_trailer != length) {
    if (frame.size() < tcp_frame_header + length + tcp_frame_trailer)
      return {errc::truncated, frame.size()};
    return {errc::length_mismatch, 4};
  }
  const std::size_t data_end = tcp_frame_header + length;
  out.crc_field = load_be32(frame.data() + data_end);
  out.crc_computed = crc16_ibm(frame.subspan(tcp_frame_header, length));
  if (crc == crc_policy::strict && !out.crc_ok()) return {errc::bad_crc, data_end};

  const std::uint8_t* p = frame.data() + tcp_frame_header;
  out.codec = p[0];
  if (!is_command_codec(out.codec))
    return {is_avl_codec(out.codec) ? errc::wrong_codec : errc::unknown_codec, tcp_frame_header};
  out.quantity = p[1];
  out.type = p[2];
  if (!type_allowed(out.codec, out.type)) return {errc::bad_message_type, tcp_frame_header + 2};
  const std::size_t size = load_be32(p + 3);
  const std::size_t size_offset = tcp_frame_header + 3;
  if (size != length - command_overhead) return {errc::length_mismatch, size_offset};
  const std::size_t prefix = prefix_bytes(out.codec);
  if (size < prefix) return {errc::length_too_small, size_offset};
  const std::size_t body = tcp_frame_header + 7;
  std::size_t payload_begin = body;
  if (out.codec == 0x0D || out.codec == 0x0F) {
    out.has_timestamp = true;
    out.timestamp_s = load_be32(frame.data() + payload_begin);
    payload_begin += 4;
  }
  if (out.codec == 0x0E || out.codec == 0x0F) {
    out.has_imei = true;
    const errc e = imei_from_bcd(std::span<const std::uint8_t, 8>(frame.data() + payload_begin, 8),
                                 out.device);
    if (e != errc::ok) return {e, payload_begin};
    payload_begin += 8;
  }
  const std::size_t quantity2 = body + size;
  out.payload = frame.subspan(payload_begin, quantity2 - payload_begin);
  if (frame[quantity2] != out.quantity) return {errc::record_count_mismatch, quantity2};
  return {errc::ok, frame.size()};
}

errc encode_command_frame(const command_fields& fields, std::vector<std::uint8_t>& out) {
  const auto codec = static_cast<std::uint8_t>(fields.codec);
  if (!is_command_codec(codec)) return errc::value_out_of_range;
  const bool with_imei = codec == 0x0E || codec == 0x0F;
  if (with_imei && fields.device.empty()) return errc::value_out_of_range;
  const std::size_t size = prefix_bytes(codec) + fields.payload.size();
  if (size > 0xFFFF'FFFFU - command_overhead) return errc::value_out_of_range;

  const std::size_t start = out.size();
  out.resize(start + tcp_frame_header + command_overhead + size + tcp_frame_trailer);
  std::uint8_t* p = out.data() + start;
  store_be32(p, 0);
  store_be32(p + 4, static_cast<std::uint32_t>(size + command_overhead));
  std::uint8_t* data = p + tcp_frame_header;
  data[0] = codec;
  data[1] = 1;
  data[2] = fields.type;
  store_be32(data + 3, static_cast<std::uint32_t>(size));
  std::uint8_t* w = data + 7;
  if (codec == 0x0D || codec == 0x0F) {
    store_be32(w, fields.timestamp_s);
    w += 4;
  }
  if (with_imei) {
    imei_to_bcd(fields.device, std::span<std::uint8_t, 8>(w, 8));
    w += 8;
  }
  if (!fields.payload.empty()) std::memcpy(w, fields.payload.data(), fields.payload.size());
  w += fields.payload.size();
  *w++ = 1;
  const std::size_t data_size = static_cast<std::size_t>(w - data);
  store_be32(w, crc16_ibm({data, data_size}));
  return errc::ok;
}

std::optional<std::size_t> find_control_character(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) return i;
    // U+0080..U+009F, encoded C2 80..C2 9F.
    if (c == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return i;
    }
  }
  return std::nullopt;
}

}  // namespace tgw::codecs
