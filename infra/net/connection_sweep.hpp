#pragma once

// The deadline sweep of one io context of tcp_server (internal to infra/net).
#include <chrono>
#include <memory>
#include <vector>

#include "infra/net/connection_executor.hpp"
#include "infra/net/handshake_gate.hpp"

namespace tgw::infra::net {

class tcp_connection;

/// The open connections of one io context and one timer that closes those past their
/// deadline (the handshake's until a device is identified, then the idle timeout), in
/// place of a timer each: a connection's timer and its pending wait were 80 bytes in
/// the connection and an operation of 160 (docs/PERFORMANCE.md, "Idle memory"). Only the
/// context's thread touches it. It holds the connections as the pending waits did:
/// an open connection lives until it is shut down.
struct connection_sweep : std::enable_shared_from_this<connection_sweep> {
  connection_sweep(asio::io_context& io, std::chrono::milliseconds every)
      : timer(io.get_executor()), period(every) {}

  void add(std::shared_ptr<tcp_connection> c);
  /// Takes the connection out; the caller holds it until it is done with it.
  std::shared_ptr<tcp_connection> remove(tcp_connection* c);
  void arm();
  /// Closes every connection past its deadline, then sleeps a period.
  void sweep();

  connection_timer timer;
  std::chrono::milliseconds period;
  /// The TLS handshake gate of the server, swept with the connections; null: none.
  std::shared_ptr<handshake_gate> gate;
  std::vector<std::shared_ptr<tcp_connection>> open;
  bool armed = false;
};

}  // namespace tgw::infra::net
