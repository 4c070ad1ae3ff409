#pragma once

#include <string_view>

namespace tgw::infra::node {

/// The Redis Functions library `tgw_node` (node_library.lua), loaded with
/// FUNCTION LOAD REPLACE at start so a Redis restart or failover keeps it.
[[nodiscard]] std::string_view node_library_source() noexcept;

}  // namespace tgw::infra::node
