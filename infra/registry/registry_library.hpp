#pragma once

#include <string_view>

namespace tgw::infra::registry {

/// The Redis Functions library `tgw_registry` (registry_library.lua).
[[nodiscard]] std::string_view registry_library_source() noexcept;

}  // namespace tgw::infra::registry
