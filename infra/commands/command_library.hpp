#pragma once

#include <string_view>

namespace tgw::infra::commands {

/// The Redis Functions library `tgw_commands` (command_library.lua).
[[nodiscard]] std::string_view command_library_source() noexcept;

}  // namespace tgw::infra::commands
