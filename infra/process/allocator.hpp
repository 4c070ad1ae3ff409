#pragma once

#include <string>

namespace tgw::infra::process {

/// The malloc serving this process: "jemalloc VERSION" when jemalloc is linked in or
/// preloaded, otherwise "system malloc". Said at start-up, because the allocator moves
/// the gateway's CPU per packet by several percent (docs/PERFORMANCE.md) and a build or
/// an LD_PRELOAD can change it without anything else showing.
[[nodiscard]] std::string allocator_in_use();

}  // namespace tgw::infra::process
