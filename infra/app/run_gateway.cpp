#include "infra/app/run_gateway.hpp"

#include <csignal>
#include <functional>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>

#include "actors/domain/persist_health.hpp"
#include "actors/gateway/allowlist_keeper.hpp"
#include "infra/app/gateway_actors.hpp"
#include "infra/app/gateway_listeners.hpp"
#include "infra/app/gateway_redis.hpp"
#include "infra/log/log_budget.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/net/allowlist_file.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/net/tls_memory.hpp"
#include "infra/process/allocator.hpp"
#include "infra/process/cpu_policy.hpp"
#include "infra/process/service_notify.hpp"
#include "infra/process/termination.hpp"
#include "infra/registry/allowlist_set.hpp"

namespace tgw::infra::app {
namespace {

using namespace std::chrono_literals;
using actors::gateway::allowlist_keeper;

/// Everything one instance holds, in the order it is made; destroyed in reverse.
struct gateway {
  explicit gateway(const gateway_plan& p) : plan(p) {}
  const gateway_plan& plan;
  std::shared_ptr<metrics::gateway_counters> counters =
      std::make_shared<metrics::gateway_counters>();
  std::unique_ptr<allowlist_keeper> allowlist;
  std::shared_ptr<net::tls_context_source> tls;
  gateway_redis redis;
  std::shared_ptr<domain::persist_health> health;
  std::unique_ptr<gateway_actors> actors;
  gateway_listeners listeners;
  process::service_notifier service;
  /// Tells, every log interval, the lines the log budgets held back.
  std::shared_ptr<net::asio::steady_timer> log_flush;
  /// --api-addr: the application API beside the devices; first to stop.
  std::unique_ptr<api::api_server> api;
};

// What is read from files (the allowlist, the TLS certificate) loads before anything
// starts; what does not load is a setup error: exit code 2.
int load_files(gateway& g) {
  if (!g.plan.allowlist_file.empty()) {
    g.allowlist =
        std::make_unique<allowlist_keeper>(net::file_allowlist(g.plan.allowlist_file), g.counters);
    std::string error;
    if (!g.allowlist->load_first(error)) {
      spdlog::error("{}", error);
      return 2;
    }
  }
  if (g.plan.tls) {
    std::string error;
    auto context = net::tls_server_context::load(*g.plan.tls, error);
    if (!context) {
      spdlog::error("{}", error);
      return 2;
    }
    spdlog::info("TLS certificate: {}", context->description());
    if (!context->warning().empty()) spdlog::warn("{}", context->warning());
    if (const auto& memory = net::tls_memory_status(); !memory.warning.empty())
      spdlog::warn("TLS: {}", memory.warning);
    g.tls = std::make_shared<net::tls_context_source>(*g.plan.tls, std::move(context));
  }
  return 0;
}

// The allowlist of --allowlist-redis, once Redis is known to serve this instance.
int load_redis_allowlist(gateway& g) {
  if (!g.plan.allowlist_redis) return 0;
  g.allowlist = std::make_unique<allowlist_keeper>(
      registry::redis_allowlist(g.redis.connection("allowlist")), g.counters);
  std::string error;
  if (!g.allowlist->load_first(error)) {
    spdlog::error("{}", error);
    return 1;
  }
  return 0;
}

// Start: what can be wrong is refused before a device can connect (one line, exit 2 for
// the setup, 1 for Redis or a port), then the actors, then the ports.
int start(gateway& g) {
  const gateway_plan& plan = g.plan;
  configure_log_budgets(plan.log_budgets);
  if (const int code = load_files(g); code != 0) return code;
  // Before any thread starts, so that all of them inherit it. Not fatal: the gateway
  // works the same under the normal policy, at some more CPU per packet.
  if (const std::string error = process::apply_cpu_policy(plan.cpu); !error.empty())
    spdlog::warn("{}; going on with the current one", error);
  if (const int code = open_redis(plan, g.redis); code != 0) return code;
  g.health = std::make_shared<domain::persist_health>(
      domain::persist_health::settings{plan.readiness_window, plan.failure_log_interval,
                                       static_cast<std::size_t>(plan.writer_shards)});
  if (const int code = check_redis(plan, g.redis, *g.health); code != 0) return code;
  if (const int code = claim_instance(plan, g.redis); code != 0) return code;
  if (const int code = load_redis_allowlist(g); code != 0) return code;
  g.actors = std::make_unique<gateway_actors>(plan, g.redis, g.counters, g.health,
                                              g.allowlist ? g.allowlist->list() : nullptr);
  // A port that cannot open ends the start: no device was accepted yet, so stopping the
  // actors and leaving the command path (the heartbeat the registry just wrote) is all
  // there is to undo.
  if (const std::string failed = g.listeners.open(plan, *g.actors, g.counters, g.tls, g.health);
      !failed.empty()) {
    spdlog::error("{}", failed);
    g.actors->stop();
    hand_over_commands(plan, g.redis);
    return 1;
  }
  if (plan.api) {
    std::string error;
    g.api = api::api_server::start(*plan.api, g.redis.connection("api"), nullptr, error);
    if (!g.api) {
      spdlog::error("--api-addr: {}", error);
      g.listeners.stop_accepting();
      g.actors->stop();
      hand_over_commands(plan, g.redis);
      return 1;
    }
    spdlog::info("application API on {}://{}", plan.api->tls_cert.empty() ? "http" : "https",
                 plan.api->listen);
  }
  return 0;
}

// systemd (Type=notify): ready once devices can connect; the watchdog pings only while
// an io thread still runs a posted task, so a wedged gateway is restarted.
void notify_ready(gateway& g) {
  auto& io = *g.listeners.io;
  auto io_alive_at = std::make_shared<std::atomic<std::int64_t>>(0);
  g.service.notify("READY=1\nSTATUS=listening on port " +
                   std::to_string(g.listeners.server->port()));
  g.service.start_watchdog([&io, io_alive_at, period = g.service.watchdog_period()] {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    net::asio::post(io.front(), [io_alive_at, now] {
      io_alive_at->store(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
    });
    const auto last = std::chrono::microseconds{io_alive_at->load()};
    // The task posted at the previous ping must have run by now (half a period later).
    return last.count() == 0 ||
           std::chrono::duration_cast<std::chrono::microseconds>(now) - last <= period;
  });
}

// A flood's last lines held back are told even when nothing of its cause follows.
void flush_log_budgets_every(gateway& g, std::chrono::milliseconds interval) {
  g.log_flush = std::make_shared<net::asio::steady_timer>(g.listeners.io->front());
  auto tick = std::make_shared<std::function<void()>>();
  *tick = [timer = std::weak_ptr(g.log_flush), interval, weak = std::weak_ptr(tick)] {
    auto t = timer.lock();
    auto again = weak.lock();
    if (!t || !again) return;
    t->expires_after(interval);
    t->async_wait([again](const boost::system::error_code& ec) {
      if (ec) return;
      flush_log_budgets();
      (*again)();
    });
  };
  (*tick)();
}

void say_listening(const gateway& g) {
  const gateway_plan& plan = g.plan;
  const auto& server = *g.listeners.server;
  const auto* tls_server = g.listeners.tls_server.get();
  const auto running = process::current_cpu_policy();
  const std::string_view running_policy = running ? process::to_string(*running) : "real-time";
  spdlog::info(
      "instance {} listening on {}:{} {} ({} io threads, {} actor threads, {} writers, "
      "cpu policy {}, {}){}",
      plan.instance_id, plan.bind, server.port(), g.listeners.udp ? "tcp+udp" : "tcp",
      plan.io_threads, plan.actor_threads, plan.writer_shards, running_policy,
      process::allocator_in_use(),
      plan.metrics_addr.empty() ? "" : ", metrics on http://" + plan.metrics_addr + "/metrics");
  if (g.tls)
    spdlog::info("TLS on tcp {}:{}{}", plan.bind, tls_server ? tls_server->port() : server.port(),
                 tls_server ? ", plain TCP stays on " + std::to_string(server.port()) : "");
  if (plan.proxy != net::proxy_mode::off)
    spdlog::info("PROXY protocol {} required on every TCP connection, from {} only",
                 net::to_string(plan.proxy), plan.proxy_from_text);
  if (!plan.trusted_sources.empty())
    spdlog::info("per-address limits do not apply to --trusted-sources {}",
                 plan.trusted_sources_text);
}

// SIGHUP: re-read what can change without dropping a device: the allowlist (devices
// it no longer admits are disconnected) and the TLS certificate (open connections
// keep the one they started with). What no longer loads stays in force.
void reload(allowlist_keeper* allowlist, net::tls_context_source* tls, api::api_server* api) {
  if (api != nullptr) {
    std::string report;
    if (api->reload(report))
      spdlog::info("SIGHUP: API {}", report);
    else
      spdlog::error("SIGHUP: API {}", report);
  }
  if (allowlist == nullptr && tls == nullptr) {
    spdlog::info("SIGHUP: nothing to reload (no allowlist, no TLS)");
    return;
  }
  if (allowlist != nullptr) allowlist->reload("SIGHUP");
  if (tls != nullptr) {
    std::string report;
    if (tls->reload(report)) {
      spdlog::info("SIGHUP: TLS {}", report);
      if (const auto& warning = tls->current()->warning(); !warning.empty())
        spdlog::warn("SIGHUP: TLS: {}", warning);
    } else
      spdlog::error("SIGHUP: TLS: {}", report);
  }
}

// Serve: devices connect until SIGINT or SIGTERM; SIGHUP reloads. Returns the signal.
int serve(gateway& g) {
  g.listeners.start();
  g.counters->listening.store(true);
  flush_log_budgets_every(g, g.plan.log_budgets.interval);
  notify_ready(g);
  say_listening(g);
  if (g.allowlist) {
    g.allowlist->watch_sessions(g.actors->directory());
    if (g.allowlist->source().polled()) g.allowlist->refresh_every(g.plan.allowlist_refresh);
  }
  int signal = 0;
  while ((signal = process::wait_for_signal()) == SIGHUP)
    reload(g.allowlist.get(), g.tls.get(), g.api.get());
  return signal;
}

template <class Predicate>
void wait_until(Predicate done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(10ms);
}

// Drain: no new device; devices wait for the ACK of what they sent, so persistence
// finishes first (bounded by --drain-timeout-ms); then every connection closes.
void drain(gateway& g, int signal) {
  // The supervisor of the private redis-server sends the SIGTERM itself when it gives up.
  if (g.redis.gave_up->load())
    spdlog::error(
        "stopping: the private redis-server could not be kept running; draining (at most {} "
        "ms)",
        g.plan.drain_timeout.count());
  else
    spdlog::info("signal {}: draining (at most {} ms)", signal, g.plan.drain_timeout.count());
  // Not ready from here on, so a balancer that watches /readyz sends no new device.
  g.counters->listening.store(false);
  g.api.reset();
  g.service.notify("STOPPING=1");
  g.listeners.stop_accepting();
  wait_until([&] { return g.counters->persist_in_flight.load() == 0; }, g.plan.drain_timeout);
  g.listeners.close_all("shutdown");
  g.actors->close_udp("shutdown");
  wait_until([&] { return g.counters->sessions_open.load() == 0; }, 2000ms);
}

// Stop: the registry entries and the command path are handed over, the actors and the
// io threads finish, the private redis-server last (everything above still writes to it).
int stop(gateway& g) {
  g.actors->leave();
  hand_over_commands(g.plan, g.redis);
  // Sessions sent their last journal events; give the writers a moment to write them.
  std::this_thread::sleep_for(100ms);
  g.actors->stop();
  g.listeners.stop_io();
  g.actors->await_all();
  g.redis.embedded.reset();
  if (g.redis.gave_up->load()) {
    spdlog::error("instance {} stopped: its private redis-server could not be kept running",
                  g.plan.instance_id);
    return 1;
  }
  spdlog::info("instance {} stopped", g.plan.instance_id);
  return 0;
}

}  // namespace

int run_gateway(const gateway_plan& plan) {
  // A device gone mid-write is an error on its connection, never a signal that ends
  // the process (Asio and the TLS socket send with MSG_NOSIGNAL; this covers the rest).
  std::signal(SIGPIPE, SIG_IGN);
  gateway g(plan);
  if (const int code = start(g); code != 0) return code;
  const int signal = serve(g);
  drain(g, signal);
  return stop(g);
}

}  // namespace tgw::infra::app
