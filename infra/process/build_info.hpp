#pragma once

#include <string_view>

namespace tgw::infra::process {

/// The project version, from `project(tgw VERSION ...)` in CMakeLists.txt.
std::string_view version() noexcept;

/// The git commit the binary was built from (`git describe --always --dirty`), or
/// "unknown" outside a git checkout. Written at every build (cmake/build_info.cmake).
std::string_view commit() noexcept;

}  // namespace tgw::infra::process
