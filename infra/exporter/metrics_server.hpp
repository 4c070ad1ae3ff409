#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace tgw::infra::exporter {

/// Why the process is not ready, or empty when it is.
using readiness_check = std::function<std::string()>;

/// The HTTP side of a process's metrics, on civetweb's own two threads: Prometheus text
/// at /metrics from `collect` (called at each scrape), /healthz 200 while the process
/// serves HTTP, /readyz 200 "ready" or 503 "not ready: <why>" from `ready`.
class metrics_server {
 public:
  using collector = std::function<std::vector<prometheus::MetricFamily>()>;

  /// Throws std::runtime_error if the address cannot be bound.
  metrics_server(const std::string& address, collector collect, readiness_check ready = {});
  ~metrics_server();
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tgw::infra::exporter
