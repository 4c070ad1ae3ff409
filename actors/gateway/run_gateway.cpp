#include "actors/gateway/run_gateway.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <fstream>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/commands/command_messages.hpp"
#include "actors/commands/command_reader.hpp"
#include "actors/commands/command_responder.hpp"
#include "actors/commands/session_directory.hpp"
#include "actors/gateway/allowlist_keeper.hpp"
#include "actors/gateway/gateway_messages.hpp"
#include "actors/gateway/retention_actor.hpp"
#include "actors/gateway/session.hpp"
#include "actors/gateway/telemetry_writer.hpp"
#include "actors/gateway/udp_ingest.hpp"
#include "actors/registry/registry_actor.hpp"
#include "infra/app/allocator.hpp"
#include "infra/app/cpu_policy.hpp"
#include "infra/app/service_notify.hpp"
#include "infra/app/termination.hpp"
#include "infra/capture/capture_recorder.hpp"
#include "infra/health/persist_health.hpp"
#include "infra/health/startup_check.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/metrics/metrics_endpoint.hpp"
#include "infra/net/address_limits.hpp"
#include "infra/net/allowlist.hpp"
#include "infra/net/allowlist_source.hpp"
#include "infra/net/handshake_gate.hpp"
#include "infra/net/proxy_header.hpp"
#include "infra/net/tcp_server.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/net/udp_server.hpp"
#include "infra/redis/embedded_redis.hpp"
#include "infra/redis/server_mode.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/telemetry/gateway_library.hpp"
#include "infra/telemetry/redis_telemetry_store.hpp"

namespace tgw::actors::gateway {
namespace {

using namespace std::chrono_literals;

// Set when the private redis-server could not be restarted: the SIGTERM that follows
// ends the gateway with exit code 1 instead of 0.
std::atomic<bool> gave_up_on_redis{false};

int cores() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::string default_instance_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const auto started = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return std::string(host[0] != '\0' ? host : "tgw") + "-" + std::to_string(getpid()) + "-" +
         std::to_string(started);
}

// Every long-lived actor of the instance. A start-up failure stops them all, or the
// actor system's destructor, which waits for every actor, would never return.
class instance_actors {
 public:
  template <class Handle>
  Handle add(Handle handle) {
    all_.push_back(caf::actor_cast<caf::actor>(handle));
    return handle;
  }

  void stop_and_wait(caf::actor_system& system) {
    for (const auto& a : all_) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    caf::scoped_actor self{system};
    self->wait_for(all_);
  }

 private:
  std::vector<caf::actor> all_;
};

// SIGHUP: re-read what can change without dropping a device: the allowlist (devices
// it no longer admits are disconnected) and the TLS certificate (open connections
// keep the one they started with). What no longer loads stays in force.
void reload(allowlist_keeper* allowlist, infra::net::tls_context_source* tls) {
  if (allowlist == nullptr && tls == nullptr) {
    spdlog::info("SIGHUP: nothing to reload (no allowlist, no TLS)");
    return;
  }
  if (allowlist != nullptr) allowlist->reload("SIGHUP");
  if (tls != nullptr) {
    std::string report;
    if (tls->reload(report))
      spdlog::info("SIGHUP: TLS {}", report);
    else
      spdlog::error("SIGHUP: TLS: {}", report);
  }
}

// A loopback peer without a PROXY header is exempt (infra/net/tcp_server.cpp).
infra::net::address_limit_settings address_limit_settings(const infra::serve_options& o) {
  return {o.per_address_rate, o.per_address_burst, o.per_address_handshakes,
          static_cast<unsigned>(o.per_address_ipv6_prefix)};
}

// What the device listeners count, summed over the plain and the TLS port.
infra::metrics::live_gauges live_gauges(
    std::vector<const infra::net::tcp_server*> servers,
    std::shared_ptr<infra::net::tls_context_source> tls,
    std::shared_ptr<infra::net::handshake_gate> handshakes,
    std::shared_ptr<infra::net::address_limits> limits, std::shared_ptr<retention_status> retention,
    std::shared_ptr<const infra::health::persist_health> health) {
  auto sum = [servers](auto field) {
    double total = 0;
    for (const auto* s : servers) total += static_cast<double>((s->counters().*field).load());
    return total;
  };
  using c = infra::net::server_counters;
  infra::metrics::live_gauges g;
  g.connections_open = [sum] { return sum(&c::open); };
  g.connection_results = [sum] {
    return infra::metrics::live_gauges::labelled{
        {"accepted", sum(&c::accepted)},
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
      return infra::metrics::live_gauges::labelled{{"established", sum(&c::tls_established)},
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
      infra::metrics::live_gauges::labelled out;
      for (const auto& group : retention->view().groups) out.emplace_back(group.name, value(group));
      return out;
    };
  };
  g.consumer_lag_entries = per_group(
      [](const infra::telemetry::group_progress& p) { return static_cast<double>(p.lag_entries); });
  g.consumer_pending_entries = per_group(
      [](const infra::telemetry::group_progress& p) { return static_cast<double>(p.pending); });
  g.consumer_lag_seconds = per_group([](const infra::telemetry::group_progress& p) {
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

template <class Predicate>
void wait_until(Predicate done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(10ms);
}

void hand_over_commands(const infra::redis::endpoint& where, const std::string& instance,
                        std::size_t max_payload, const infra::redis::key_shards& key_shards) {
  infra::redis::connection redis({where, 2000ms, 5000ms, "tgw-" + instance + "-shutdown"});
  for (std::uint32_t s = 0; s < key_shards.count(); ++s) {
    const auto deleted =
        redis.command({"DEL", infra::registry::keys::heartbeat(instance, key_shards.prefix(s))});
    if (deleted.is_error()) {
      spdlog::warn("commands: heartbeat not removed at shutdown: {}", deleted.text);
      return;  // Redis is down: the janitor of another instance adopts the stream later.
    }
  }
  infra::commands::command_store store({where, 2000ms, 5000ms, "tgw-" + instance + "-shutdown"},
                                       instance, max_payload, key_shards);
  std::string error;
  if (!store.load_library(error)) {
    spdlog::warn("commands: stream not handed over at shutdown: {}", error);
    return;
  }
  const auto counts = store.adopt_orphans(instance, error);
  if (!counts)
    spdlog::warn("commands: stream not handed over at shutdown: {}", error);
  else if (counts->handled > 0)
    spdlog::info("commands: {} unanswered command(s) handed over: {} re-routed, {} failed",
                 counts->handled, counts->rerouted, counts->failed);
}

// Not fatal: replicas may be on their way. But an operator who asked for replicated
// ACKs on a master without replicas sees nothing ACKed, and must hear why at once.
void warn_if_short_of_replicas(const infra::redis::endpoint& where, int wanted) {
  infra::redis::connection redis({where, 2000ms, 5000ms, "tgw-replica-check"});
  const auto info = redis.command({"INFO", "replication"});
  if (info.is_error()) {
    // INFO may be refused by the ACL: the writers' WAIT results say the same, later.
    spdlog::info("--ack-replicas {}: replicas not counted at start ({})", wanted, info.text);
    return;
  }
  const auto at = info.text.find("connected_slaves:");
  const int connected = at == std::string::npos ? 0 : std::atoi(info.text.c_str() + at + 17);
  if (connected < wanted)
    spdlog::warn(
        "--ack-replicas {}: {} has {} connected replica(s); no packet is ACKed until {} "
        "replica(s) confirm it",
        wanted, redis.server(), connected, wanted);
  else
    spdlog::info("--ack-replicas {}: {} has {} connected replica(s)", wanted, redis.server(),
                 connected);
}

// /readyz: the device port accepts, this instance can persist (so ACK) now, and its
// heartbeat is fresh, so other instances do not take it for dead.
infra::metrics::readiness not_ready_because(const infra::metrics::gateway_counters& c,
                                            const infra::health::persist_health& health,
                                            std::chrono::seconds heartbeat_ttl) {
  if (!c.listening.load()) return {"not_listening", "the device port is not accepting"};
  const auto steady_now = std::chrono::steady_clock::now();
  if (std::string stalled = health.stalled_because(steady_now); !stalled.empty())
    return {"persist_" + health.current(steady_now).reason, stalled};
  const std::int64_t at = c.heartbeat_at_ms.load();
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

}  // namespace

int run_gateway(const infra::serve_options& o) {
  // A device gone mid-write is an error on its connection, never a signal that ends
  // the process (Asio and the TLS socket send with MSG_NOSIGNAL; this covers the rest).
  std::signal(SIGPIPE, SIG_IGN);
  const std::string instance = o.instance_id.empty() ? default_instance_id() : o.instance_id;
  auto counters = std::make_shared<infra::metrics::gateway_counters>();
  // Configuration that can be wrong is checked before anything starts: exit code 2.
  std::unique_ptr<allowlist_keeper> allowlist;
  if (!o.allowlist_file.empty()) {
    allowlist =
        std::make_unique<allowlist_keeper>(infra::net::file_allowlist(o.allowlist_file), counters);
    std::string error;
    if (!allowlist->load_first(error)) {
      spdlog::error("{}", error);
      return 2;
    }
  }
  std::shared_ptr<infra::net::tls_context_source> tls;
  if (!o.tls_cert.empty()) {
    infra::net::tls_settings settings{
        o.tls_cert, o.tls_key, o.tls_client_ca,
        o.tls_ciphers.empty() ? infra::net::tls_settings::default_ciphers : o.tls_ciphers};
    std::string error;
    auto context = infra::net::tls_server_context::load(settings, error);
    if (!context) {
      spdlog::error("{}", error);
      return 2;
    }
    spdlog::info("TLS certificate: {}", context->description());
    tls = std::make_shared<infra::net::tls_context_source>(settings, std::move(context));
  }
  const auto proxy = infra::net::parse_proxy_mode(o.proxy_protocol);
  if (!proxy) {
    spdlog::error("--proxy-protocol {}: expected off, v1, v2 or any", o.proxy_protocol);
    return 2;
  }
  std::string proxy_from_error;
  const auto proxy_from = infra::net::parse_prefixes(o.proxy_from, proxy_from_error);
  if (!proxy_from) {
    spdlog::error("--proxy-from {}: {}", o.proxy_from, proxy_from_error);
    return 2;
  }
  if (o.tls_port != 0 && o.tls_port == o.port) {
    spdlog::error("--tls-port {} is --port too; give TLS a port of its own or drop --tls-port",
                  o.tls_port);
    return 2;
  }
  // Before any thread starts, so that all of them inherit it. Not fatal: the gateway
  // works the same under the normal policy, at some more CPU per packet.
  const auto cpu = infra::parse_cpu_policy(o.cpu_policy).value_or(infra::cpu_policy::keep);
  if (const std::string error = infra::apply_cpu_policy(cpu); !error.empty())
    spdlog::warn("{}; going on with the current one", error);

  std::unique_ptr<infra::redis::embedded_redis> embedded;
  infra::redis::endpoint where;
  if (o.redis_url.empty()) {
    try {
      embedded = std::make_unique<infra::redis::embedded_redis>(o.data_dir);
    } catch (const std::exception& e) {
      spdlog::error("cannot start the private Redis: {}", e.what());
      return 1;
    }
    where = embedded->where();
    spdlog::info("private redis-server on {} (pid {})", where.describe(), embedded->pid());
    // Kept up for as long as the gateway runs: restarted on its data dir if it dies;
    // if it cannot be, the gateway stops with exit code 1 for its own supervisor.
    embedded->supervise({o.embedded_redis_restarts, 200ms, 5000ms, [] {
                           gave_up_on_redis.store(true);
                           ::kill(::getpid(), SIGTERM);
                         }});
  } else {
    std::string error;
    auto parsed = infra::redis::parse_redis_url(o.redis_url, error);
    if (!parsed) {
      spdlog::error("--redis: {}", error);
      return 2;
    }
    where = *parsed;
  }
  if (o.telemetry_shards > 0 && !where.via_cluster()) {
    spdlog::error(
        "--telemetry-shards: only a Redis Cluster (redis+cluster://) splits keys in "
        "shards; a single node keeps one telemetry stream");
    return 2;
  }
  // On a cluster every key of a device lives in its key shard; all gateways and readers
  // of the cluster must agree on the shard count, which the cluster stores.
  infra::redis::key_shards key_shards;
  {
    infra::redis::connection probe({where, 2000ms, 5000ms, "tgw-" + instance + "-shards"});
    // First of all: a URL whose scheme does not fit the server (a cluster node or a
    // sentinel named by redis://) fails every later step with a puzzling error.
    if (const std::string wrong = infra::redis::wrong_url_scheme(probe); !wrong.empty()) {
      spdlog::error("--redis: {}", wrong);
      return 2;
    }
    std::string error;
    auto agreed = infra::redis::agree_key_shards(probe, o.telemetry_shards, error);
    if (!agreed) {
      spdlog::error("cannot use Redis at {}: {}", where.describe(), error);
      // A cluster that answers but disagrees (a stored count unlike --telemetry-shards)
      // is a usage error; one whose master for the count's key is down is not.
      const std::string cause = infra::health::classify_redis_failure(error).label;
      const bool transient =
          cause == "connection" || cause == "cluster_down" || cause == "loading" || cause == "busy";
      return where.via_cluster() && probe.connected() && !transient ? 2 : 1;
    }
    key_shards = std::move(*agreed);
    if (key_shards.tagged())
      spdlog::info("Redis Cluster {}: keys in {} shards", where.describe(), key_shards.count());
  }

  infra::telemetry::store_settings settings{instance,
                                            o.journal_maxlen,
                                            o.telemetry_maxlen,
                                            o.ack_replicas,
                                            std::chrono::milliseconds{o.ack_replicas_timeout_ms},
                                            key_shards};
  auto make_store = [&](int shard) {
    return std::make_shared<infra::telemetry::redis_telemetry_store>(
        infra::redis::connection::options{where, 2000ms, 5000ms,
                                          "tgw-" + instance + "-writer-" + std::to_string(shard)},
        settings);
  };
  const int half = std::max(1, cores() / 2);
  const int shards = o.writer_shards > 0 ? o.writer_shards : std::max(2, half);
  auto health =
      std::make_shared<infra::health::persist_health>(infra::health::persist_health::settings{
          std::chrono::milliseconds{o.readiness_window_ms},
          std::chrono::seconds{o.failure_log_interval_s}, static_cast<std::size_t>(shards),
          infra::telemetry::gateway_library_source()});
  {
    // Before the device port opens: a setup that cannot persist is refused here, with
    // one line naming the fix, rather than found out by devices that are never ACKed.
    auto probe = make_store(-1);
    std::string error;
    if (!probe->load_library(error)) {
      const auto cause = infra::health::classify_redis_failure(error);
      spdlog::error("cannot use Redis at {}: {}", where.describe(), infra::health::describe(cause));
      return 1;
    }
    if (where.via_sentinel()) spdlog::info("Redis: {} (via {})", probe->server(), where.describe());
    infra::redis::connection conn({where, 2000ms, 5000ms, "tgw-" + instance + "-check"});
    const auto verdict = infra::health::check_before_start(
        conn, *probe,
        {instance, key_shards.prefix(0), o.ack_replicas, o.telemetry_retention == "groups",
         o.allowlist_redis, o.janitor_mode == "scan", where.db != 0, where.via_cluster(),
         where.via_sentinel()});
    if (verdict.exit_code != 0) {
      spdlog::error("cannot use Redis at {}: {}", where.describe(), verdict.refusal);
      return verdict.exit_code;
    }
    if (!verdict.unchecked.empty()) spdlog::warn("start-up check: {}", verdict.unchecked);
    if (!verdict.not_ready.empty())
      health->start_stalled({verdict.not_ready, true, 0}, std::chrono::steady_clock::now());
  }
  if (o.ack_replicas > 0) warn_if_short_of_replicas(where, o.ack_replicas);
  if (o.allowlist_redis) {
    allowlist = std::make_unique<allowlist_keeper>(
        infra::net::redis_allowlist({where, 2000ms, 5000ms, "tgw-" + instance + "-allowlist"}),
        counters);
    std::string error;
    if (!allowlist->load_first(error)) {
      spdlog::error("{}", error);
      return 1;
    }
  }

  // Half the cores for each pool by default: a gateway usually shares its host with
  // Redis, and on two cores one thread per pool spent about a tenth less CPU per
  // packet than two (fewer hand-offs between sleeping threads) for the same work.
  // Writers are at least two: a writer waits for its pipeline's replies before it
  // sends the next batch, and a second one keeps Redis busy meanwhile (a fifth more
  // records/s with 10-record packets on two cores, for a few percent more CPU).
  const int io_threads = o.io_threads > 0 ? o.io_threads : half;
  const int actor_threads = o.actor_threads > 0 ? o.actor_threads : half;

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", actor_threads);
  cfg.set("scheduler.policy",
          o.actor_scheduler == "stealing" ? caf::atom("stealing") : caf::atom("sharing"));
  caf::actor_system system{cfg};

  auto make_registry_store = [&](const char* role) {
    return std::make_shared<infra::registry::registry_store>(
        infra::redis::connection::options{where, 2000ms, 5000ms, "tgw-" + instance + "-" + role},
        instance, key_shards);
  };
  registry::registry_config registry_settings;
  registry_settings.heartbeat_interval = std::chrono::milliseconds{o.heartbeat_interval_ms};
  registry_settings.heartbeat_ttl = std::chrono::seconds{o.heartbeat_ttl_s};
  const std::chrono::milliseconds log_interval = std::chrono::seconds{o.failure_log_interval_s};
  registry_settings.failure_log_interval = log_interval;
  instance_actors actors;
  auto registry_handle = actors.add(system.spawn<caf::detached>(
      registry::registry_actor, registry_settings, make_registry_store("registry"), counters));
  registry::janitor_config janitor_settings;
  janitor_settings.interval = std::chrono::milliseconds{o.janitor_interval_ms};
  janitor_settings.mode = o.janitor_mode == "scan" ? infra::registry::janitor_mode::scan
                                                   : infra::registry::janitor_mode::reverse_index;
  auto make_command_store = [&](const char* role, std::chrono::milliseconds io_timeout) {
    return std::make_shared<infra::commands::command_store>(
        infra::redis::connection::options{where, 2000ms, io_timeout,
                                          "tgw-" + instance + "-" + role},
        instance, o.command_max_payload, key_shards);
  };
  auto janitor_handle = actors.add(system.spawn<caf::detached>(
      registry::janitor_actor, janitor_settings, make_registry_store("janitor"), counters,
      make_command_store("janitor-commands", 5000ms)));
  // Outbound commands. The reader's socket timeout exceeds its BLOCK (1 s), or hiredis
  // would give up on a read the server still holds.
  auto directory = std::make_shared<commands::session_directory>();
  commands::responder_config responder_settings;
  responder_settings.journal_maxlen = o.journal_maxlen;
  responder_settings.failure_log_interval = log_interval;
  // A response is a promise to a waiting publisher, like an ACK to a device: with
  // --ack-replicas it counts as published only once replicas hold it.
  auto responder_store = make_command_store("responder", 5000ms);
  responder_store->require_replicas(o.ack_replicas,
                                    std::chrono::milliseconds{o.ack_replicas_timeout_ms});
  auto responder_handle = actors.add(system.spawn<caf::detached>(
      commands::command_responder, responder_settings, responder_store, counters));
  commands::reader_config reader_settings;
  reader_settings.journal_maxlen = o.journal_maxlen;
  reader_settings.failure_log_interval = log_interval;
  // Telemetry retention: every instance watches the consumer groups (lag metrics) and,
  // with --telemetry-retention groups, trims what they all acknowledged.
  auto retention = std::make_shared<retention_status>();
  retention_config retention_settings{o.telemetry_retention == "groups",
                                      std::chrono::milliseconds{o.telemetry_retention_interval_ms}};
  retention_settings.streams.clear();
  for (std::uint32_t s = 0; s < key_shards.count(); ++s)
    retention_settings.streams.push_back(
        infra::telemetry::keys::telemetry_stream_in(key_shards.prefix(s)));
  actors.add(system.spawn<caf::detached>(
      retention_actor, retention_settings,
      std::make_shared<infra::redis::connection>(infra::redis::connection::options{
          where, 2000ms, 5000ms, "tgw-" + instance + "-retention"}),
      retention));
  auto reader_handle = actors.add(system.spawn<caf::detached>(
      commands::command_reader, reader_settings, make_command_store("reader", 3000ms),
      std::shared_ptr<const commands::session_directory>(directory), counters));

  auto config = std::make_shared<session_config>();
  config->registry = registry_handle;
  config->instance_id = instance;
  config->crc = o.crc == "ignore" ? codecs::crc_policy::ignore : codecs::crc_policy::strict;
  if (allowlist) config->allowlist = allowlist->list();
  config->counters = counters;
  config->directory = directory;
  config->responder = responder_handle;
  config->command_queue_limit = o.command_queue;
  config->command_timeout = std::chrono::milliseconds{o.command_timeout_ms};
  writer_config writing;
  writing.linger = std::chrono::microseconds{o.writer_linger_us};
  writing.health = health;
  writing.persist_retry = std::chrono::milliseconds{o.persist_retry_ms};
  for (int i = 0; i < shards; ++i)
    config->writers.push_back(actors.add(
        system.spawn<caf::detached>(telemetry_writer, writing, make_store(i), i, counters)));
  std::shared_ptr<const session_config> shared_config = config;
  // UDP datagrams of every device go through one actor.
  const auto udp_idle =
      std::chrono::seconds{o.udp_idle_timeout_s > 0 ? o.udp_idle_timeout_s : o.idle_timeout_s};
  auto udp_actor = actors.add(system.spawn(
      udp_ingest, shared_config, std::chrono::duration_cast<std::chrono::milliseconds>(udp_idle)));

  // A listener that cannot open ends the start: no device was accepted yet, so stopping
  // the actors and leaving the command path (the heartbeat the registry just wrote) is
  // all there is to undo. One line says why; the exit code is 1.
  auto give_up = [&](const std::string& reason) {
    spdlog::error("{}", reason);
    actors.stop_and_wait(system);
    hand_over_commands(where, instance, o.command_max_payload, key_shards);
    return 1;
  };

  std::shared_ptr<infra::capture::capture_recorder> capture;
  if (!o.capture_dir.empty()) {
    infra::capture::rotation_policy policy;
    policy.dir = o.capture_dir;
    policy.max_file_bytes = o.capture_max_file_mb << 20;
    policy.max_age = std::chrono::seconds{o.capture_max_age_s};
    policy.max_total_bytes = o.capture_max_total_mb << 20;
    try {
      capture = std::make_shared<infra::capture::capture_recorder>(
          policy, infra::capture::queue_limits{}, counters);
    } catch (const std::exception& e) {
      return give_up(std::string("cannot record into --capture-dir ") + o.capture_dir + ": " +
                     e.what());
    }
    spdlog::info("recording device connections into {}", o.capture_dir);
  }

  // One io_context per io thread: connections are spread over them and need no strand.
  infra::net::io_pool io(static_cast<std::size_t>(io_threads));
  infra::net::connection_limits limits;
  limits.max_frame_size = o.max_frame_size;
  limits.first_byte_timeout = std::chrono::milliseconds{o.first_byte_timeout_ms};
  limits.handshake_timeout = std::chrono::milliseconds{o.handshake_timeout_ms};
  limits.idle_timeout = std::chrono::seconds{o.idle_timeout_s};
  limits.max_connections = o.max_connections;
  limits.max_frames_in_flight = o.max_frames_in_flight;
  auto address_limits = std::make_shared<infra::net::address_limits>(address_limit_settings(o));
  auto tls_handshakes = std::make_shared<infra::net::handshake_gate>(o.tls_handshakes);
  auto make_session = [&system, shared_config](std::shared_ptr<infra::net::device_link> link) {
    auto actor = system.spawn(session, link, shared_config);
    return make_session_listener(actor);
  };
  auto listen = [&](std::uint16_t port, std::shared_ptr<infra::net::tls_context_source> on_tls) {
    return std::make_unique<infra::net::tcp_server>(
        io, infra::net::tcp::endpoint{infra::net::asio::ip::make_address(o.bind), port}, limits,
        make_session, capture,
        infra::net::listener_security{*proxy, *proxy_from, on_tls, address_limits,
                                      on_tls ? tls_handshakes : nullptr});
  };
  // --port is plain unless TLS has no port of its own; --tls-port is TLS.
  std::unique_ptr<infra::net::tcp_server> server;
  std::unique_ptr<infra::net::tcp_server> tls_server;
  try {
    server = listen(o.port, o.tls_port == 0 ? tls : nullptr);
  } catch (const std::exception& e) {
    return give_up("cannot listen on tcp " + o.bind + ":" + std::to_string(o.port) + ": " +
                   e.what());
  }
  if (tls && o.tls_port != 0) {
    try {
      tls_server = listen(o.tls_port, tls);
    } catch (const std::exception& e) {
      return give_up("cannot listen on tcp " + o.bind + ":" + std::to_string(o.tls_port) +
                     " (--tls-port): " + e.what());
    }
  }
  std::vector<const infra::net::tcp_server*> servers = {server.get()};
  if (tls_server) servers.push_back(tls_server.get());

  // UDP on the same port number as TCP (the bound one, when --port is 0).
  std::unique_ptr<infra::net::udp_server> udp;
  try {
    udp = std::make_unique<infra::net::udp_server>(
        io.front(),
        infra::net::udp::endpoint{infra::net::asio::ip::make_address(o.bind), server->port()},
        [udp_actor](std::vector<std::uint8_t> datagram, infra::net::udp_reply reply,
                    std::string peer) {
          caf::anon_send(udp_actor, datagram_atom::value, std::move(datagram), std::move(reply),
                         std::move(peer));
        });
  } catch (const std::exception& e) {
    return give_up("cannot listen on udp " + o.bind + ":" + std::to_string(server->port()) + ": " +
                   e.what());
  }

  std::unique_ptr<infra::metrics::metrics_endpoint> metrics;
  if (!o.metrics_addr.empty()) {
    try {
      metrics = std::make_unique<infra::metrics::metrics_endpoint>(
          o.metrics_addr, counters,
          live_gauges(servers, tls, tls_handshakes, address_limits, retention, health), instance,
          [counters, health, ttl = std::chrono::seconds{o.heartbeat_ttl_s}] {
            return not_ready_because(*counters, *health, ttl);
          });
    } catch (const std::exception& e) {
      return give_up("cannot serve metrics on --metrics-addr " + o.metrics_addr + ": " + e.what());
    }
  }

  server->start();
  if (tls_server) tls_server->start();
  udp->start();
  io.start();
  counters->listening.store(true);
  // systemd (Type=notify): ready once devices can connect; the watchdog pings only
  // while an io thread still runs a posted task, so a wedged gateway is restarted.
  infra::service_notifier service;
  auto io_alive_at = std::make_shared<std::atomic<std::int64_t>>(0);
  service.notify("READY=1\nSTATUS=listening on port " + std::to_string(server->port()));
  service.start_watchdog([&io, io_alive_at, period = service.watchdog_period()] {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    infra::net::asio::post(io.front(), [io_alive_at, now] {
      io_alive_at->store(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
    });
    const auto last = std::chrono::microseconds{io_alive_at->load()};
    // The task posted at the previous ping must have run by now (half a period later).
    return last.count() == 0 ||
           std::chrono::duration_cast<std::chrono::microseconds>(now) - last <= period;
  });
  const auto running = infra::current_cpu_policy();
  const std::string_view running_policy = running ? infra::to_string(*running) : "real-time";
  spdlog::info(
      "instance {} listening on {}:{} tcp+udp ({} io threads, {} actor threads, {} writers, "
      "cpu policy {}, {}){}",
      instance, o.bind, server->port(), io_threads, actor_threads, shards, running_policy,
      infra::allocator_in_use(),
      o.metrics_addr.empty() ? "" : ", metrics on http://" + o.metrics_addr + "/metrics");
  if (tls)
    spdlog::info("TLS on tcp {}:{}{}", o.bind, tls_server ? tls_server->port() : server->port(),
                 tls_server ? ", plain TCP stays on " + std::to_string(server->port()) : "");
  if (*proxy != infra::net::proxy_mode::off)
    spdlog::info("PROXY protocol {} required on every TCP connection, from {} only",
                 infra::net::to_string(*proxy), o.proxy_from);

  int signal = 0;
  if (allowlist) {
    allowlist->watch_sessions(directory);
    if (allowlist->source().polled())
      allowlist->refresh_every(std::chrono::seconds{o.allowlist_refresh_s});
  }
  while ((signal = infra::wait_for_signal()) == SIGHUP) reload(allowlist.get(), tls.get());
  spdlog::info("signal {}: draining (at most {} ms)", signal, o.drain_timeout_ms);
  // Not ready from here on, so a balancer that watches /readyz sends no new device.
  counters->listening.store(false);
  service.notify("STOPPING=1");
  server->stop_accepting();
  if (tls_server) tls_server->stop_accepting();
  udp->stop();
  // Devices wait for the ACK of what they sent; let persistence finish first.
  wait_until([&] { return counters->persist_in_flight.load() == 0; },
             std::chrono::milliseconds{o.drain_timeout_ms});
  server->close_all("shutdown");
  if (tls_server) tls_server->close_all("shutdown");
  caf::anon_send(udp_actor, closed_atom::value, std::string("shutdown"));
  wait_until([&] { return counters->sessions_open.load() == 0; }, 2000ms);
  // Every held device, owner-checked: one that already moved keeps its entry.
  {
    caf::scoped_actor self{system};
    self->request(registry_handle, 10s, registry::unreg_all_atom::value)
        .receive([](std::size_t) {},
                 [](const caf::error& e) {
                   spdlog::error("registry: unregister at shutdown: {}", caf::to_string(e));
                 });
    // Closed sessions failed their commands (socket_closed); publish those answers
    // before leaving. What cannot be published stays pending in the stream, and the
    // janitor of another instance answers it once this one's heartbeat expires.
    self->request(responder_handle, 5s, commands::sync_atom::value)
        .receive(
            [](bool all_published) {
              if (!all_published)
                spdlog::warn("commands: some responses unpublished at shutdown (Redis down)");
            },
            [](const caf::error& e) {
              spdlog::warn("commands: responder at shutdown: {}", caf::to_string(e));
            });
  }
  for (const auto& a : {registry_handle, janitor_handle, reader_handle, responder_handle})
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  {
    caf::scoped_actor self{system};
    self->wait_for(registry_handle, reader_handle, responder_handle, janitor_handle);
  }
  // Leave the command path at once rather than after the heartbeat's TTL: publishers
  // see this instance as gone, and what is left in its stream is re-routed to the
  // devices' new owners or answered instance_lost, each entry once.
  hand_over_commands(where, instance, o.command_max_payload, key_shards);
  // Sessions sent their last journal events; give the writers a moment to write them.
  std::this_thread::sleep_for(100ms);
  actors.stop_and_wait(system);
  io.stop();
  io.join();
  system.await_all_actors_done();
  // Last: everything above still writes to it.
  if (embedded) embedded.reset();
  if (gave_up_on_redis.load()) {
    spdlog::error("instance {} stopped: its private redis-server could not be kept running",
                  instance);
    return 1;
  }
  spdlog::info("instance {} stopped", instance);
  return 0;
}

}  // namespace tgw::actors::gateway
