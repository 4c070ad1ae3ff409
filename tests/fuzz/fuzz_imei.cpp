// Fuzzes the IMEI parsers: the TCP handshake (parse_imei_packet), the Codec 14/15
// BCD form (imei_from_bcd), imei::parse and the numeric map key (imei_key), with
// their encoders as the oracle.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/errc.hpp"
#include "codecs/imei.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace tgw::codecs;
using tgw::fuzz::require;

bool is_digit(std::uint8_t b) noexcept {
  return b >= '0' && b <= '9';
}

void fuzz_packet(std::span<const std::uint8_t> input) {
  imei id;
  const decode_status s = parse_imei_packet(input, id);
  if (input.size() < imei_packet_header) {
    require(s.code == errc::need_more && s.offset == input.size());
    return;
  }
  const std::size_t length = load_be16(input.data());
  const std::size_t total = imei_packet_header + length;
  const bool length_ok = length >= imei_min_digits && length <= imei_max_digits;
  switch (s.code) {
    case errc::ok: {
      require(length_ok && s.offset == total && input.size() >= total);
      const auto digits = input.subspan(imei_packet_header, length);
      require(std::ranges::equal(digits, id.str()));
      std::vector<std::uint8_t> encoded;
      encode_imei_packet(id, encoded);
      require(std::ranges::equal(encoded, input.first(total)));
      // Any shorter prefix of a good packet only waits for more.
      for (std::size_t n = 0; n < total; ++n) {
        imei partial;
        const decode_status p = parse_imei_packet(input.first(n), partial);
        require(p.code == errc::need_more && p.offset == n && partial.empty());
      }
      break;
    }
    case errc::need_more:
      require(length_ok && input.size() < total && s.offset == input.size());
      break;
    case errc::bad_imei_length:
      require(!length_ok && s.offset == 0);
      break;
    case errc::bad_imei_digit:
      require(length_ok && input.size() >= total);
      require(s.offset >= imei_packet_header && s.offset < total && !is_digit(input[s.offset]));
      require(std::ranges::all_of(input.subspan(imei_packet_header, s.offset - imei_packet_header),
                                  is_digit));
      break;
    default:
      require(false);
  }
  if (!s.ok()) require(id.empty());
}

void fuzz_bcd(std::span<const std::uint8_t, 8> bcd) {
  imei id;
  const errc e = imei_from_bcd(bcd, id);
  const bool nibbles_ok =
      std::ranges::all_of(bcd, [](std::uint8_t b) { return (b >> 4) <= 9 && (b & 0x0FU) <= 9; });
  if (!nibbles_ok) {
    require(e == errc::bad_imei_digit && id.empty());
    return;
  }
  require(e == errc::ok);
  require(id.str().size() == ((bcd[0] >> 4) == 0 ? 15U : 16U));
  std::array<std::uint8_t, 8> back{};
  imei_to_bcd(id, back);
  require(std::ranges::equal(back, bcd));
}

void fuzz_text(std::span<const std::uint8_t> input) {
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  imei id;
  const errc e = imei::parse(text, id);
  const auto key = imei_key(text);
  const bool length_ok = text.size() >= imei_min_digits && text.size() <= imei_max_digits;
  if (!length_ok) {
    require(e == errc::bad_imei_length && id.empty() && !key);
    return;
  }
  if (!std::ranges::all_of(input, is_digit)) {
    require(e == errc::bad_imei_digit && id.empty() && !key);
    return;
  }
  require(e == errc::ok && id.str() == text);
  // The key gives the same digits back, leading zeros and length included.
  require(key.has_value() && imei_from_key(*key) == text);

  std::array<std::uint8_t, 8> bcd{};
  imei_to_bcd(id, bcd);
  imei back;
  require(imei_from_bcd(bcd, back) == errc::ok);
  // 16 nibbles cannot tell a 16-digit IMEISV with a leading zero from a padded
  // 15-digit IMEI; the decoder reads the 15-digit form, as devices send.
  if (text.size() == 16 && text[0] == '0')
    require(back.str() == text.substr(1));
  else
    require(back == id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  fuzz_packet(input);
  if (size >= 8) fuzz_bcd(input.first<8>());
  fuzz_text(input);
  return 0;
}
