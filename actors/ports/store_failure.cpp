#include "actors/ports/store_failure.hpp"

namespace tgw::ports {

std::string_view name_of(failure_kind kind) noexcept {
  switch (kind) {
    case failure_kind::none:
      return "none";
    case failure_kind::unreachable:
      return "unreachable";
    case failure_kind::timeout:
      return "timeout";
    case failure_kind::no_permission:
      return "no_permission";
    case failure_kind::out_of_memory:
      return "out_of_memory";
    case failure_kind::read_only:
      return "read_only";
    case failure_kind::moved:
      return "moved";
    case failure_kind::unavailable:
      return "unavailable";
    case failure_kind::other:
      break;
  }
  return "other";
}

std::string describe(const failure_cause& cause) {
  return cause.fix.empty() ? cause.detail : cause.detail + ": " + cause.fix;
}

}  // namespace tgw::ports
