#pragma once

#include "infra/log/log_budget.hpp"
#include "infra/metrics/refusals.hpp"

namespace tgw::infra {

/// The log budget of one refusal reason: every place that refuses a peer for that
/// reason shares it, so a flood of one kind is a few lines an interval however many
/// connections, frames or datagrams it refuses.
[[nodiscard]] log_budget& refusal_log(metrics::refusal why);

}  // namespace tgw::infra
