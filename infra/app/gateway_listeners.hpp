#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/domain/persist_health.hpp"
#include "infra/app/gateway_actors.hpp"
#include "infra/app/gateway_plan.hpp"
#include "infra/capture/capture_recorder.hpp"
#include "infra/exporter/metrics_endpoint.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/net/address_limits.hpp"
#include "infra/net/handshake_gate.hpp"
#include "infra/net/io_pool.hpp"
#include "infra/net/tcp_server.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/net/udp_server.hpp"

namespace tgw::infra::app {

/// The device ports of one instance (plain TCP, TLS, UDP) on its io threads, the
/// recorder of their traffic and the metrics endpoint. Destroyed in the reverse order
/// of the members: the endpoint and the ports first, the io threads, the recorder last.
struct gateway_listeners {
  std::shared_ptr<capture::capture_recorder> capture;  ///< With --capture-dir.
  /// One io_context per io thread: connections are spread over them and need no strand.
  std::unique_ptr<net::io_pool> io;
  std::shared_ptr<net::address_limits> address_limits;
  std::shared_ptr<net::handshake_gate> tls_handshakes;
  std::unique_ptr<net::tcp_server> server;              ///< --port: plain unless TLS has no port.
  std::unique_ptr<net::tcp_server> tls_server;          ///< --tls-port.
  std::unique_ptr<net::udp_server> udp;                 ///< The port number TCP has.
  std::unique_ptr<exporter::metrics_endpoint> metrics;  ///< With --metrics-addr.

  /// Opens every port and the endpoint, and the capture files; nothing is accepted
  /// before start(). Returns the one line that says why something could not open, or
  /// an empty string.
  [[nodiscard]] std::string open(const gateway_plan& plan, gateway_actors& actors,
                                 const std::shared_ptr<metrics::gateway_counters>& counters,
                                 std::shared_ptr<net::tls_context_source> tls,
                                 const std::shared_ptr<const domain::persist_health>& health);
  /// Accepts devices: the ports, then the io threads.
  void start();
  /// Accepts no new device; open connections stay.
  void stop_accepting();
  /// Closes every device connection with `reason`.
  void close_all(const std::string& reason);
  /// The io threads finish.
  void stop_io();
  /// The TCP listeners, for their counters.
  [[nodiscard]] std::vector<const net::tcp_server*> servers() const;
};

}  // namespace tgw::infra::app
