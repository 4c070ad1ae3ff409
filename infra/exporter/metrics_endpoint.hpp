#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "infra/exporter/metrics_server.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::infra::exporter {

/// Extra gauges read at scrape time (for example, open connections from the server).
struct live_gauges {
  using labelled = std::vector<std::pair<std::string, double>>;
  std::function<double()> connections_open;
  /// Keepalive bytes counted by the listeners, where they arrive.
  std::function<double()> keepalives;
  /// Device connections by outcome (accepted, refused_over_limit, ...).
  std::function<labelled()> connection_results;
  /// Connections closed for a framing error with this codecs::errc value.
  std::function<double(std::size_t errc)> framing_errors;
  /// TLS handshakes by result (established, failed); unset without TLS.
  std::function<labelled()> tls_handshakes;
  /// TLS handshakes running, and waiting for one of --tls-handshakes' slots.
  std::function<double()> tls_handshakes_running;
  std::function<double()> tls_handshakes_waiting;
  /// Expiry of the certificate in force, seconds since the epoch; unset without TLS.
  std::function<double()> tls_certificate_expiry;
  /// Connections of limited addresses still in their handshake.
  std::function<double()> handshakes_in_progress;
  /// The telemetry stream: its length and bytes, what retention trimmed, and per consumer group
  /// the entries not yet delivered, delivered but not acknowledged, and the age in
  /// seconds of the oldest entry it still needs.
  std::function<double()> telemetry_stream_length;
  std::function<double()> telemetry_stream_bytes;
  std::function<double()> telemetry_trimmed;
  std::function<labelled()> consumer_lag_entries;
  std::function<labelled()> consumer_pending_entries;
  std::function<labelled()> consumer_lag_seconds;
  /// The current persist stall: its cause and how long it has lasted (an empty cause
  /// and 0 while persisting works).
  std::function<std::pair<std::string, double>()> persist_stall;
};

/// Why a gateway is not ready: `reason`, a short stable label (the `reason` of
/// teltonika_ready), and `detail`, the line /readyz answers with. Both empty while it
/// is ready.
struct readiness {
  std::string reason;
  std::string detail;
};
using readiness_verdict = std::function<readiness()>;

/// Serves, on a metrics_server (its own io thread, within `limits`): Prometheus text at
/// http://ADDR/metrics; /healthz, 200 while the process serves HTTP; /readyz, 200
/// "ready" or 503 "not ready: <why>" from `ready`, whose verdict is also the gauge
/// teltonika_ready, so that an alert sees what a balancer sees. Counters are read at
/// scrape time; the data path only increments atomics. Names are listed in
/// docs/GATEWAY.md.
class metrics_endpoint {
 public:
  /// Throws http::listen_error naming the address and why it cannot be listened on.
  metrics_endpoint(const std::string& address,
                   std::shared_ptr<const metrics::gateway_counters> counters, live_gauges gauges,
                   std::string instance_id, readiness_verdict ready = {},
                   http::server_limits limits = {});
  ~metrics_endpoint();
  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tgw::infra::exporter
