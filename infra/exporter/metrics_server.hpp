#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

#include "infra/http/server_limits.hpp"

namespace tgw::infra::exporter {

/// Why the process is not ready, or empty when it is.
using readiness_check = std::function<std::string()>;

/// Labels every series of a process carries: the gateway's instance_id, the sink's
/// group and consumer.
using metric_labels = std::vector<std::pair<std::string, std::string>>;

/// The HTTP side of a process's metrics, on an infra/http server with one io thread
/// of its own: Prometheus text at /metrics from `collect` (called at each scrape, on
/// that thread: it reads counters, never waits), /healthz 200 "ok" while the process
/// serves HTTP, /readyz 200 "ready" or 503 "not ready: <why>" from `ready`. The
/// endpoint's own connections, refusals and deadline closes are appended to every
/// scrape as teltonika_http_*{endpoint="metrics"}, with `labels`.
class metrics_server {
 public:
  using collector = std::function<std::vector<prometheus::MetricFamily>()>;

  /// Throws http::listen_error naming the address and why it cannot be listened on.
  metrics_server(const std::string& address, collector collect, readiness_check ready = {},
                 http::server_limits limits = {}, metric_labels labels = {});
  ~metrics_server();
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  /// The port bound (the one the system chose for port 0).
  [[nodiscard]] std::uint16_t port() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The one line a process stops with when its metrics endpoint cannot start: the
/// address, the cause, and the flag that moves it (--metrics-addr, in every command
/// that serves metrics). "cannot serve metrics: 127.0.0.1:9127 is in use by another
/// listener; choose another address with --metrics-addr ('' for none)".
[[nodiscard]] std::string cannot_serve_metrics(const std::exception& failure);

}  // namespace tgw::infra::exporter
