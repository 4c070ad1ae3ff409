#pragma once

#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

#include "infra/http/server_stats.hpp"

namespace tgw::infra::exporter {

/// Appends what an HTTP server did, labelled `endpoint` (metrics, api) after `labels`:
/// teltonika_http_connections (open), teltonika_http_connections_total{result}
/// (accepted, refused_max_connections, refused_address_limit),
/// teltonika_http_closed_total{reason} (the deadline and size closes),
/// teltonika_http_requests_total, teltonika_http_handler_failures_total and
/// teltonika_http_accept_failures_total.
void add_http_metrics(std::vector<prometheus::MetricFamily>& out, const http::server_stats& stats,
                      const std::string& endpoint,
                      const std::vector<std::pair<std::string, std::string>>& labels);

}  // namespace tgw::infra::exporter
