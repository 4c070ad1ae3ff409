#include "infra/process/cpu_policy.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace tgw::infra::process {

namespace {
constexpr cpu_policy all_policies[] = {cpu_policy::batch, cpu_policy::normal, cpu_policy::keep};
}  // namespace

std::optional<cpu_policy> parse_cpu_policy(std::string_view text) {
  for (const cpu_policy p : all_policies)
    if (text == to_string(p)) return p;
  return std::nullopt;
}

std::vector<std::string> cpu_policy_names() {
  std::vector<std::string> names;
  for (const cpu_policy p : all_policies) names.emplace_back(to_string(p));
  return names;
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

}  // namespace tgw::infra::process
