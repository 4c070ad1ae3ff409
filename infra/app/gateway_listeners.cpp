#include "infra/app/gateway_listeners.hpp"

#include <spdlog/spdlog.h>

#include "infra/app/gateway_gauges.hpp"

namespace tgw::infra::app {
namespace {

// Made before the ports open, so a wrong directory is found before any device connects.
std::shared_ptr<capture::capture_recorder> record_into(
    const capture::rotation_policy& policy,
    const std::shared_ptr<metrics::gateway_counters>& counters) {
  // The recorder counts into the instance's counters (aliases of `counters`).
  using counter = std::atomic<std::uint64_t>;
  return std::make_shared<capture::capture_recorder>(
      policy, capture::queue_limits{},
      capture::recorder_counters{
          std::shared_ptr<counter>(counters, &counters->capture_bytes_written),
          std::shared_ptr<counter>(counters, &counters->capture_dropped)});
}

}  // namespace

std::string gateway_listeners::open(const gateway_plan& plan, gateway_actors& actors,
                                    const std::shared_ptr<metrics::gateway_counters>& counters,
                                    std::shared_ptr<net::tls_context_source> tls,
                                    const std::shared_ptr<const domain::persist_health>& health) {
  if (plan.capture) {
    try {
      capture = record_into(*plan.capture, counters);
    } catch (const std::exception& e) {
      return "cannot record into --capture-dir " + plan.capture->dir.string() + ": " + e.what();
    }
    spdlog::info("recording device connections into {}", plan.capture->dir.string());
  }
  io = std::make_unique<net::io_pool>(static_cast<std::size_t>(plan.io_threads));
  address_limits = std::make_shared<net::address_limits>(plan.per_address);
  tls_handshakes = std::make_shared<net::handshake_gate>(plan.tls_gate);
  // Refusals count into the instance's counters (an alias of `counters`).
  const std::shared_ptr<metrics::refusal_counters> refusals(counters, &counters->refusals);
  auto listen = [&](std::uint16_t port, std::shared_ptr<net::tls_context_source> on_tls) {
    net::listener_security security;
    security.proxy = plan.proxy;
    security.proxy_from = plan.proxy_from;
    security.tls = std::move(on_tls);
    security.limits = address_limits;
    security.trusted = plan.trusted_sources;
    security.refusals = refusals;
    security.handshakes = security.tls ? tls_handshakes : nullptr;
    return std::make_unique<net::tcp_server>(
        *io, net::tcp::endpoint{net::asio::ip::make_address(plan.bind), port}, plan.limits,
        actors.session_factory(), capture, std::move(security));
  };
  // --port is plain unless TLS has no port of its own; --tls-port is TLS.
  try {
    server = listen(plan.port, plan.tls_port == 0 ? tls : nullptr);
  } catch (const std::exception& e) {
    return "cannot listen on tcp " + plan.bind + ":" + std::to_string(plan.port) + ": " + e.what();
  }
  if (tls && plan.tls_port != 0) {
    try {
      tls_server = listen(plan.tls_port, tls);
    } catch (const std::exception& e) {
      return "cannot listen on tcp " + plan.bind + ":" + std::to_string(plan.tls_port) +
             " (--tls-port): " + e.what();
    }
  }
  // UDP on the same port number as TCP (the bound one, when --port is 0).
  if (plan.udp_enabled) {
    net::udp_limits limits;
    limits.per_address = std::make_shared<net::address_limits>(plan.udp_per_address);
    limits.trusted = plan.trusted_sources;
    limits.backlog = actors.udp_backlog();
    limits.refusals = refusals;
    try {
      udp = std::make_unique<net::udp_server>(
          io->front(), net::udp::endpoint{net::asio::ip::make_address(plan.bind), server->port()},
          actors.udp_handler(), std::move(limits));
    } catch (const std::exception& e) {
      return "cannot listen on udp " + plan.bind + ":" + std::to_string(server->port()) + ": " +
             e.what();
    }
  }
  if (plan.metrics_addr.empty()) return "";
  try {
    metrics = std::make_unique<exporter::metrics_endpoint>(
        plan.metrics_addr, counters,
        live_gauges(servers(), tls, tls_handshakes, address_limits, actors.retention(), health),
        plan.instance_id,
        [counters, health, ttl = plan.registry.heartbeat_ttl] {
          return not_ready_because(*counters, *health, ttl);
        },
        plan.metrics_limits);
  } catch (const std::exception& e) {
    return exporter::cannot_serve_metrics(e);
  }
  return "";
}

void gateway_listeners::start() {
  server->start();
  if (tls_server) tls_server->start();
  if (udp) udp->start();
  io->start();
}

void gateway_listeners::stop_accepting() {
  server->stop_accepting();
  if (tls_server) tls_server->stop_accepting();
  if (udp) udp->stop();
}

void gateway_listeners::close_all(const std::string& reason) {
  server->close_all(reason);
  if (tls_server) tls_server->close_all(reason);
}

void gateway_listeners::stop_io() {
  io->stop();
  io->join();
}

std::vector<const net::tcp_server*> gateway_listeners::servers() const {
  std::vector<const net::tcp_server*> all = {server.get()};
  if (tls_server) all.push_back(tls_server.get());
  return all;
}

}  // namespace tgw::infra::app
