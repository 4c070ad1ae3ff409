#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tgw::infra {

/// Upper-case hex of `bytes`, two digits a byte, no separators.
[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);

/// Bytes from hex text. Whitespace, ':' and '-' between digit pairs are skipped, and a
/// leading "0x" is allowed; anything else, or an odd digit count, gives nullopt.
[[nodiscard]] std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text);

}  // namespace tgw::infra
