#include "infra/metrics/command_outcomes.hpp"

namespace tgw::infra::metrics {

std::size_t command_outcome_index(std::string_view status,
                                  std::string_view failure_reason) noexcept {
  const std::string_view name = status != "failed" ? status
                                : failure_reason.starts_with("malformed")
                                    ? std::string_view("malformed")
                                    : failure_reason;
  for (std::size_t i = 0; i + 1 < command_outcome_names.size(); ++i)
    if (command_outcome_names[i] == name) return i;
  return command_outcome_names.size() - 1;
}

}  // namespace tgw::infra::metrics
