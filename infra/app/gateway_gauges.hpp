#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "actors/domain/persist_health.hpp"
#include "actors/gateway/retention_status.hpp"
#include "infra/exporter/metrics_endpoint.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/net/address_limits.hpp"
#include "infra/net/handshake_gate.hpp"
#include "infra/net/tcp_server.hpp"
#include "infra/net/tls_context.hpp"

namespace tgw::infra::app {

/// What the metrics endpoint reads at scrape time beside the counters: the device
/// listeners (summed over the plain and the TLS port), TLS, the per-address limits,
/// telemetry retention and the persist stall.
[[nodiscard]] exporter::live_gauges live_gauges(
    std::vector<const net::tcp_server*> servers, std::shared_ptr<net::tls_context_source> tls,
    std::shared_ptr<net::handshake_gate> handshakes, std::shared_ptr<net::address_limits> limits,
    std::shared_ptr<const actors::gateway::retention_status> retention,
    std::shared_ptr<const domain::persist_health> health);

/// /readyz: the device port accepts, this instance can persist (so ACK) now, and its
/// heartbeat is fresh, so other instances do not take it for dead.
[[nodiscard]] exporter::readiness not_ready_because(const metrics::gateway_counters& c,
                                                    const domain::persist_health& health,
                                                    std::chrono::seconds heartbeat_ttl);

}  // namespace tgw::infra::app
