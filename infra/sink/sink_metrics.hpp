#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "infra/sink/sink_counters.hpp"

namespace tgw::infra::sink {

/// The sink's metrics at this moment (docs/TELEMETRY.md lists them), labelled with its
/// consumer group and consumer name, plus the build and process metrics.
[[nodiscard]] std::vector<prometheus::MetricFamily> sink_metric_families(
    const sink_counters& c, const std::string& group, const std::string& consumer);

/// Why the sink is not ready (PostgreSQL or Redis unreachable), or empty.
[[nodiscard]] std::string sink_readiness(const sink_counters& c);

}  // namespace tgw::infra::sink
