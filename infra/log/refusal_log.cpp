#include "infra/log/refusal_log.hpp"

#include <array>
#include <utility>

namespace tgw::infra {
namespace {

template <std::size_t... I>
std::array<log_budget, sizeof...(I)> budgets(std::index_sequence<I...>) {
  // refusal_names hold string literals: each view's data() ends in a NUL.
  return {log_budget{metrics::refusal_names[I].data(), log_kind::refusal}...};
}

}  // namespace

log_budget& refusal_log(metrics::refusal why) {
  static std::array<log_budget, metrics::refusal_names.size()> all =
      budgets(std::make_index_sequence<metrics::refusal_names.size()>{});
  return all[static_cast<std::size_t>(why)];
}

}  // namespace tgw::infra
