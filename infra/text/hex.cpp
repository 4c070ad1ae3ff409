#include "infra/text/hex.hpp"

namespace tgw::infra {
namespace {

int nibble(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_separator(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ':' || c == '-';
}

}  // namespace

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 0x0F];
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 2);
  int high = -1;
  for (char c : text) {
    if (is_separator(c)) {
      if (high >= 0) return std::nullopt;  // a separator inside a digit pair
      continue;
    }
    const int value = nibble(c);
    if (value < 0) return std::nullopt;
    if (high < 0) {
      high = value;
    } else {
      out.push_back(static_cast<std::uint8_t>(high << 4 | value));
      high = -1;
    }
  }
  if (high >= 0) return std::nullopt;
  return out;
}

}  // namespace tgw::infra
