#pragma once

#include <vector>

#include <prometheus/metric_family.h>

namespace tgw::infra::exporter {

/// Appends the standard process collector's metrics (process_cpu_seconds_total,
/// process_resident_memory_bytes, process_open_fds, ...), read from /proc now. They
/// carry no instance label: they describe the process the scrape reaches.
void add_process_metrics(std::vector<prometheus::MetricFamily>& out);

}  // namespace tgw::infra::exporter
