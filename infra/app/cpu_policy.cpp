#include "infra/app/cpu_policy.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace tgw::infra {

std::optional<cpu_policy> parse_cpu_policy(std::string_view text) {
  if (text == "normal") return cpu_policy::normal;
  if (text == "batch") return cpu_policy::batch;
  if (text == "keep") return cpu_policy::keep;
  return std::nullopt;
}

std::string_view to_string(cpu_policy policy) {
  switch (policy) {
    case cpu_policy::batch:
      return "batch";
    case cpu_policy::keep:
      return "keep";
    case cpu_policy::normal:
      break;
  }
  return "normal";
}

std::string apply_cpu_policy(cpu_policy policy) {
  if (policy == cpu_policy::keep) return {};
  const sched_param priority{};  // Both policies take priority 0.
  const int which = policy == cpu_policy::batch ? SCHED_BATCH : SCHED_OTHER;
  if (::sched_setscheduler(0, which, &priority) == 0) return {};
  return std::string("cannot set the CPU scheduling policy to ") + std::string(to_string(policy)) +
         ": " + std::strerror(errno);
}

std::optional<cpu_policy> current_cpu_policy() {
  switch (::sched_getscheduler(0)) {
    case SCHED_OTHER:
      return cpu_policy::normal;
    case SCHED_BATCH:
      return cpu_policy::batch;
    default:
      return std::nullopt;
  }
}

}  // namespace tgw::infra
