#include "infra/text/safe_text.hpp"

#include <cstdint>

namespace tgw::infra {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` and its code point,
// or 0 when the bytes there are no such sequence (Unicode 15, table 3-7).
std::size_t utf8_sequence(std::string_view s, char32_t& code_point) noexcept {
  const auto at = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const std::uint8_t b0 = at(0);
  if (b0 < 0x80) {
    code_point = b0;
    return 1;
  }
  std::size_t n = 0;
  std::uint8_t low = 0x80;
  std::uint8_t high = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) low = 0xA0;   // Overlong below U+0800.
    if (b0 == 0xED) high = 0x9F;  // Surrogates.
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) low = 0x90;   // Overlong below U+10000.
    if (b0 == 0xF4) high = 0x8F;  // Above U+10FFFF.
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  if (at(1) < low || at(1) > high) return 0;
  char32_t cp = b0 & (0xFF >> (n + 1));
  cp = (cp << 6) | (at(1) & 0x3F);
  for (std::size_t i = 2; i < n; ++i) {
    if (at(i) < 0x80 || at(i) > 0xBF) return 0;
    cp = (cp << 6) | (at(i) & 0x3F);
  }
  code_point = cp;
  return n;
}

void append_escaped_byte(std::string& out, std::uint8_t byte) {
  constexpr const char* hex = "0123456789abcdef";
  out += "\\x";
  out += hex[byte >> 4];
  out += hex[byte & 0xF];
}

}  // namespace

bool valid_utf8(std::string_view bytes) noexcept {
  char32_t cp = 0;
  while (!bytes.empty()) {
    const std::size_t n = utf8_sequence(bytes, cp);
    if (n == 0) return false;
    bytes.remove_prefix(n);
  }
  return true;
}

std::string terminal_safe(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  char32_t cp = 0;
  while (!bytes.empty()) {
    const std::size_t n = utf8_sequence(bytes, cp);
    if (n == 0) {
      append_escaped_byte(out, static_cast<std::uint8_t>(bytes.front()));
      bytes.remove_prefix(1);
      continue;
    }
    if (cp == '\\') {
      out += "\\\\";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      // Every byte of a control character (C1 ones are two bytes in UTF-8).
      for (std::size_t i = 0; i < n; ++i)
        append_escaped_byte(out, static_cast<std::uint8_t>(bytes[i]));
    } else {
      out.append(bytes.substr(0, n));
    }
    bytes.remove_prefix(n);
  }
  return out;
}

}  // namespace tgw::infra
