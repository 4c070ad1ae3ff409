#include "codecs/imei.hpp"

#include "codecs/byte_order.hpp"

namespace tgw::codecs {

errc imei::parse(std::string_view digits, imei& out) noexcept {
  if (digits.size() < imei_min_digits || digits.size() > imei_max_digits)
    return errc::bad_imei_length;
  for (char c : digits)
    if (c < '0' || c > '9') return errc::bad_imei_digit;
  for (std::size_t i = 0; i < digits.size(); ++i) out.digits_[i] = digits[i];
  out.size_ = static_cast<std::uint8_t>(digits.size());
  return errc::ok;
}

namespace {
constexpr std::uint64_t sixteen_digits = std::uint64_t{1} << 63;
}

std::optional<std::uint64_t> imei_key(std::string_view digits) noexcept {
  imei valid;
  if (imei::parse(digits, valid) != errc::ok) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : valid.str()) value = value * 10 + static_cast<std::uint64_t>(c - '0');
  return digits.size() == imei_max_digits ? value | sixteen_digits : value;
}

std::string imei_from_key(std::uint64_t key) {
  std::string digits((key & sixteen_digits) != 0 ? imei_max_digits : imei_min_digits, '0');
  std::uint64_t value = key & ~sixteen_digits;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it, value /= 10)
    *it = static_cast<char>('0' + value % 10);
  return digits;
}

decode_status parse_imei_packet(std::span<const std::uint8_t> in, imei& out) noexcept {
  if (in.size() < imei_packet_header) return {errc::need_more, in.size()};
  const std::size_t length = load_be16(in.data());
  // A wrong length is refused before waiting for its bytes, so a peer cannot make
  // us buffer up to 64 KiB of garbage on a socket that has not identified itself.
  if (length < imei_min_digits || length > imei_max_digits) return {errc::bad_imei_length, 0};
  if (in.size() < imei_packet_header + length) return {errc::need_more, in.size()};
  const auto* text = reinterpret_cast<const char*>(in.data() + imei_packet_header);
  for (std::size_t i = 0; i < length; ++i)
    if (text[i] < '0' || text[i] > '9') return {errc::bad_imei_digit, imei_packet_header + i};
  (void)imei::parse({text, length}, out);
  return {errc::ok, imei_packet_header + length};
}

void imei_to_bcd(const imei& id, std::span<std::uint8_t, 8> out) noexcept {
  const std::string_view digits = id.str();
  const std::size_t pad = 16 - digits.size();
  for (std::size_t nibble = 0; nibble < 16; ++nibble) {
    const std::uint8_t value =
        nibble < pad ? 0 : static_cast<std::uint8_t>(digits[nibble - pad] - '0');
    if (nibble % 2 == 0)
      out[nibble / 2] = static_cast<std::uint8_t>(value << 4);
    else
      out[nibble / 2] = static_cast<std::uint8_t>(out[nibble / 2] | value);
  }
}

errc imei_from_bcd(std::span<const std::uint8_t, 8> in, imei& out) noexcept {
  std::array<char, 16> digits{};
  for (std::size_t nibble = 0; nibble < 16; ++nibble) {
    const unsigned value = nibble % 2 == 0 ? in[nibble / 2] >> 4 : in[nibble / 2] & 0x0FU;
    if (value > 9) return errc::bad_imei_digit;
    digits[nibble] = static_cast<char>('0' + value);
  }
  // 16 nibbles hold a 15-digit IMEI behind one zero pad, or a 16-digit IMEISV.
  const std::string_view all{digits.data(), digits.size()};
  return imei::parse(digits[0] == '0' ? all.substr(1) : all, out);
}

}  // namespace tgw::codecs
