#include "infra/app/gateway_gauges.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace tgw::infra::app {

exporter::live_gauges live_gauges(
    std::vector<const net::tcp_server*> servers, std::shared_ptr<net::tls_context_source> tls,
    std::shared_ptr<net::handshake_gate> handshakes, std::shared_ptr<net::address_limits> limits,
    std::shared_ptr<const actors::gateway::retention_status> retention,
    std::shared_ptr<const domain::persist_health> health) {
  auto sum = [servers](auto field) {
    double total = 0;
    for (const auto* s : servers) total += static_cast<double>((s->counters().*field).load());
    return total;
  };
  using c = net::server_counters;
  exporter::live_gauges g;
  g.connections_open = [sum] { return sum(&c::open); };
  g.keepalives = [sum] { return sum(&c::keepalives); };
  g.connection_results = [sum] {
    return exporter::live_gauges::labelled{{"accepted", sum(&c::accepted)},
                                           {"refused_over_limit", sum(&c::refused_over_limit)},
                                           {"refused_address_limit", sum(&c::refused_address)},
                                           {"refused_proxy_header", sum(&c::refused_proxy)},
                                           {"refused_proxy_source", sum(&c::refused_proxy_source)}};
  };
  g.framing_errors = [servers](std::size_t e) {
    double total = 0;
    for (const auto* s : servers)
      if (e < s->counters().framing_errors.size())
        total += static_cast<double>(s->counters().framing_errors[e].load());
    return total;
  };
  if (tls) {
    g.tls_handshakes = [sum] {
      return exporter::live_gauges::labelled{{"established", sum(&c::tls_established)},
                                             {"failed", sum(&c::tls_failed)}};
    };
    g.tls_handshakes_running = [handshakes] { return static_cast<double>(handshakes->running()); };
    g.tls_handshakes_waiting = [handshakes] { return static_cast<double>(handshakes->waiting()); };
    g.tls_certificate_expiry = [tls] {
      return static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                     tls->current()->not_after().time_since_epoch())
                                     .count());
    };
  }
  g.handshakes_in_progress = [limits] {
    return static_cast<double>(limits->handshakes_in_progress());
  };
  g.persist_stall = [health] {
    const auto stall = health->current(std::chrono::steady_clock::now());
    return std::pair<std::string, double>{stall.reason, stall.seconds};
  };
  g.telemetry_stream_length = [retention] { return static_cast<double>(retention->view().length); };
  g.telemetry_stream_bytes = [retention] { return static_cast<double>(retention->view().bytes); };
  g.telemetry_trimmed = [retention] { return static_cast<double>(retention->trimmed_total()); };
  auto per_group = [retention](auto value) {
    return [retention, value] {
      exporter::live_gauges::labelled out;
      for (const auto& group : retention->view().groups) out.emplace_back(group.name, value(group));
      return out;
    };
  };
  g.consumer_lag_entries =
      per_group([](const ports::group_progress& p) { return static_cast<double>(p.lag_entries); });
  g.consumer_pending_entries =
      per_group([](const ports::group_progress& p) { return static_cast<double>(p.pending); });
  g.consumer_lag_seconds = per_group([](const ports::group_progress& p) {
    if (!p.oldest_needed_stored_ms) return 0.0;
    const auto stored_ms = static_cast<double>(*p.oldest_needed_stored_ms);
    const double now_ms =
        static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
    return std::max(0.0, (now_ms - stored_ms) / 1000.0);
  });
  return g;
}

exporter::readiness not_ready_because(const metrics::gateway_counters& c,
                                      const domain::persist_health& health,
                                      std::chrono::seconds heartbeat_ttl) {
  if (!c.listening.load()) return {"not_listening", "the device port is not accepting"};
  const auto steady_now = std::chrono::steady_clock::now();
  if (std::string stalled = health.stalled_because(steady_now); !stalled.empty())
    return {"persist_" + health.current(steady_now).reason, stalled};
  const std::int64_t at = c.heartbeat_at_ms.load();
  if (c.heartbeat_taken.load())
    return {"heartbeat_taken",
            "another process with this --instance-id holds the heartbeat (see the log)"};
  if (at == 0) return {"no_heartbeat", "no heartbeat written yet"};
  if (!c.heartbeat_ok.load())
    return {"heartbeat_failed", "the last heartbeat write failed (Redis unreachable?)"};
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  if (now - at > std::chrono::duration_cast<std::chrono::milliseconds>(heartbeat_ttl).count())
    return {"heartbeat_stale", "the heartbeat is " + std::to_string((now - at) / 1000) +
                                   " s old (TTL " + std::to_string(heartbeat_ttl.count()) + " s)"};
  return {};
}

}  // namespace tgw::infra::app
