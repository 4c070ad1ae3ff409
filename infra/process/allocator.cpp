#include "infra/process/allocator.hpp"

#include <dlfcn.h>

#include <cstddef>

namespace tgw::infra::process {

std::string allocator_in_use() {
  // Looked up at run time rather than decided at build time, so a preloaded jemalloc
  // (LD_PRELOAD) is reported as faithfully as a linked one.
  using mallctl_fn = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  auto* mallctl = reinterpret_cast<mallctl_fn>(dlsym(RTLD_DEFAULT, "mallctl"));
  if (mallctl == nullptr) return "system malloc";
  const char* version = nullptr;
  std::size_t size = sizeof version;
  if (mallctl("version", &version, &size, nullptr, 0) != 0 || version == nullptr) return "jemalloc";
  return std::string("jemalloc ") + version;
}

}  // namespace tgw::infra::process
