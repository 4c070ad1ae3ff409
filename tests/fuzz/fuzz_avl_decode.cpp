// Fuzzes the AVL decoders (Codec 8, 8 Extended, 16) on raw bytes: decode_avl_frame
// under both CRC policies and decode_avl_data. Whatever decodes must re-encode and
// decode back to equal records. The CRC of the raw input is checked against a
// bitwise reference as well, since every frame decode depends on it.

#include <cstddef>
#include <cstdint>
#include <span>

#include "codecs/avl.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/crc16.hpp"
#include "codecs/errc.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace tgw::codecs;
using tgw::fuzz::require;

// The decoders refuse with a specific fault; need_more belongs to the framer only.
void check_status(decode_status s, std::span<const std::uint8_t> input) {
  require(s.code != errc::need_more);
  require(s.offset <= input.size());
  if (s.ok()) require(s.offset == input.size());
}

void fuzz_frame(std::span<const std::uint8_t> input) {
  avl_packet strict;
  avl_packet lenient;
  const decode_status s = decode_avl_frame(input, strict, crc_policy::strict);
  const decode_status l = decode_avl_frame(input, lenient, crc_policy::ignore);
  check_status(s, input);
  check_status(l, input);

  // A good CRC (or a fault found before the CRC is reached) makes the policies agree;
  // a bad one is the only thing strict refuses on its own.
  if (lenient.crc_ok()) {
    require(tgw::fuzz::same_status(s, l));
  } else {
    require(s.code == errc::bad_crc && s.offset == input.size() - tcp_frame_trailer);
  }
  if (!l.ok()) return;

  require(lenient.has_crc && is_avl_codec(lenient.codec));
  require(lenient.codec == input[tcp_frame_header]);
  tgw::fuzz::check_packet(lenient, input, tcp_frame_header);
  if (s.ok()) require(to_record_data(strict) == to_record_data(lenient));
  tgw::fuzz::check_avl_roundtrip(lenient);
}

void fuzz_data(std::span<const std::uint8_t> input) {
  avl_packet packet;
  const decode_status s = decode_avl_data(input, 0, packet);
  check_status(s, input);
  if (!s.ok()) return;
  require(!packet.has_crc && is_avl_codec(packet.codec) && packet.codec == input[0]);
  require(packet.records.size() == input[1] && input.back() == input[1]);
  tgw::fuzz::check_packet(packet, input, 0);
  tgw::fuzz::check_avl_roundtrip(packet);

  // A start past the end is a fault, not a read out of bounds.
  avl_packet past;
  const decode_status p = decode_avl_data(input, input.size() + 1, past);
  require(p.code == errc::truncated && past.records.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  require(crc16_ibm(input) == tgw::fuzz::reference_crc16(input));
  fuzz_frame(input);
  fuzz_data(input);
  return 0;
}
