// Fuzzes decode_command_frame (Codec 12, 13, 14, 15) under both CRC policies. A
// decoded frame must re-encode: byte for byte when it carried quantity 1 and a good
// CRC (the only frames the encoder writes), field for field otherwise.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codecs/avl_decode.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/command.hpp"
#include "codecs/errc.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace tgw::codecs;
using tgw::fuzz::require;

void check_status(decode_status s, std::span<const std::uint8_t> input) {
  require(s.code != errc::need_more);
  require(s.offset <= input.size());
  if (s.ok()) require(s.offset == input.size());
}

void check_message(const command_message& m, std::span<const std::uint8_t> input) {
  require(is_command_codec(m.codec) && m.codec == input[tcp_frame_header]);
  require(m.has_timestamp == (m.codec == 0x0D || m.codec == 0x0F));
  require(m.has_imei == (m.codec == 0x0E || m.codec == 0x0F));
  require(m.has_imei != m.device.empty());
  if (m.has_imei) {
    const std::size_t digits = m.device.str().size();
    require(digits == 15 || digits == 16);
  }
  // The payload sits between the header fields and Quantity2, CRC after that.
  require(tgw::fuzz::inside(m.payload, input.subspan(tcp_frame_header + 7)));
  require(m.payload.data() + m.payload.size() ==
          input.data() + input.size() - tcp_frame_trailer - 1);
  require(input[input.size() - tcp_frame_trailer - 1] == m.quantity);
}

void check_reencoded(const command_message& m, std::span<const std::uint8_t> input) {
  command_fields fields;
  fields.codec = static_cast<codec_id>(m.codec);
  fields.type = m.type;
  fields.timestamp_s = m.timestamp_s;
  fields.device = m.device;
  fields.payload = m.payload;
  std::vector<std::uint8_t> frame;
  require(encode_command_frame(fields, frame) == errc::ok);
  if (m.quantity == 1 && m.crc_ok()) require(std::ranges::equal(frame, input));

  command_message again;
  const decode_status s = decode_command_frame(frame, again, crc_policy::strict);
  require(s.ok() && s.offset == frame.size());
  require(again.codec == m.codec && again.type == m.type && again.quantity == 1);
  require(again.timestamp_s == m.timestamp_s && again.device == m.device);
  require(std::ranges::equal(again.payload, m.payload));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  command_message strict;
  command_message lenient;
  const decode_status s = decode_command_frame(input, strict, crc_policy::strict);
  const decode_status l = decode_command_frame(input, lenient, crc_policy::ignore);
  check_status(s, input);
  check_status(l, input);

  // The CRC fields stay zero (and so "match") when a fault comes before the CRC.
  if (lenient.crc_ok())
    require(tgw::fuzz::same_status(s, l));
  else
    require(s.code == errc::bad_crc && s.offset == size - tcp_frame_trailer);
  if (!l.ok()) return 0;

  check_message(lenient, input);
  if (s.ok())
    require(strict.codec == lenient.codec && strict.type == lenient.type &&
            strict.payload.data() == lenient.payload.data() &&
            strict.payload.size() == lenient.payload.size());
  check_reencoded(lenient, input);
  return 0;
}
