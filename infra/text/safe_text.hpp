#pragma once

#include <string>
#include <string_view>

namespace tgw::infra {

/// Whether `bytes` is well-formed UTF-8 (no overlong forms, surrogates or code points
/// above U+10FFFF), which is what a JSON document may carry as text.
[[nodiscard]] bool valid_utf8(std::string_view bytes) noexcept;

/// `bytes` made safe to print on a terminal: printable UTF-8 stays as it is; control
/// bytes (C0, DEL and the C1 range), bytes of invalid UTF-8 and the backslash are
/// written as `\xNN` (`\\` for the backslash), so no byte a device sends can move the
/// cursor or change the terminal's state, and the bytes can be read back exactly.
[[nodiscard]] std::string terminal_safe(std::string_view bytes);

}  // namespace tgw::infra
