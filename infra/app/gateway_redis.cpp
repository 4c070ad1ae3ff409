#include "infra/app/gateway_redis.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "actors/ports/registry_store.hpp"
#include "infra/commands/redis_command_store.hpp"
#include "infra/health/startup_check.hpp"
#include "infra/redis/failure_cause.hpp"
#include "infra/redis/server_mode.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/registry/heartbeat_holder.hpp"
#include "infra/registry/instance_claim.hpp"
#include "infra/registry/redis_registry_store.hpp"
#include "infra/registry/registry_keys.hpp"
#include "infra/telemetry/gateway_library.hpp"

namespace tgw::infra::app {
namespace {

using namespace std::chrono_literals;

// Not fatal: replicas may be on their way. But an operator who asked for replicated
// ACKs on a master without replicas sees nothing ACKed, and must hear why at once.
void warn_if_short_of_replicas(const redis::endpoint& where, int wanted) {
  redis::connection conn({where, 2000ms, 5000ms, "tgw-replica-check"});
  const auto info = conn.command({"INFO", "replication"});
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
        wanted, conn.server(), connected, wanted);
  else
    spdlog::info("--ack-replicas {}: {} has {} connected replica(s)", wanted, conn.server(),
                 connected);
}

// The Functions load, every command is allowed, and a canary persists.
int check_persisting(const gateway_plan& plan, const gateway_redis& server,
                     domain::persist_health& health) {
  const redis::endpoint& where = server.where;
  auto probe = server.telemetry_store(plan, -1);
  std::string error;
  if (!probe->load_library(error)) {
    const auto cause = redis::classify_redis_failure(error);
    spdlog::error("cannot use Redis at {}: {}", where.describe(), ports::describe(cause));
    return 1;
  }
  if (where.via_sentinel()) spdlog::info("Redis: {} (via {})", probe->server(), where.describe());
  redis::connection conn(server.connection("check"));
  const auto verdict = health::check_before_start(
      conn, *probe,
      {server.instance, server.key_shards.prefix(0), plan.ack_replicas, plan.retention.trim,
       plan.allowlist_redis, plan.janitor.mode == ports::janitor_mode::scan, where.db != 0,
       where.via_cluster(), where.via_sentinel()});
  if (verdict.exit_code != 0) {
    spdlog::error("cannot use Redis at {}: {}", where.describe(), verdict.refusal);
    return verdict.exit_code;
  }
  if (!verdict.unchecked.empty()) spdlog::warn("start-up check: {}", verdict.unchecked);
  if (!verdict.not_ready.empty())
    health.start_stalled(
        redis::classify_redis_failure(redis::failure_kind::no_replicas, verdict.not_ready, true),
        std::chrono::steady_clock::now());
  return 0;
}

}  // namespace

redis::connection::options gateway_redis::connection(const std::string& role,
                                                     std::chrono::milliseconds io_timeout) const {
  return {where, 2000ms, io_timeout, "tgw-" + instance + "-" + role};
}

std::shared_ptr<telemetry::redis_telemetry_store> gateway_redis::telemetry_store(
    const gateway_plan& plan, int shard) const {
  return std::make_shared<telemetry::redis_telemetry_store>(
      connection("writer-" + std::to_string(shard)),
      telemetry::store_settings{instance, plan.journal_maxlen, plan.telemetry_maxlen,
                                plan.ack_replicas, plan.ack_replicas_timeout, key_shards});
}

int open_redis(const gateway_plan& plan, gateway_redis& server) {
  server.instance = plan.instance_id;
  server.holder =
      registry::heartbeat_holder::of_this_process(plan.registry.heartbeat_interval).value();
  if (plan.redis) {
    server.where = *plan.redis;
  } else {
    try {
      server.embedded = std::make_unique<redis::embedded_redis>(plan.data_dir);
    } catch (const std::exception& e) {
      spdlog::error("cannot start the private Redis: {}", e.what());
      return 1;
    }
    server.where = server.embedded->where();
    spdlog::info("private redis-server on {} (pid {})", server.where.describe(),
                 server.embedded->pid());
    // Kept up for as long as the gateway runs: restarted on its data dir if it dies;
    // if it cannot be, the gateway stops with exit code 1 for its own supervisor.
    server.embedded->supervise(
        {plan.embedded_redis_restarts, 200ms, 5000ms, 30'000ms, [gave_up = server.gave_up] {
           gave_up->store(true);
           ::kill(::getpid(), SIGTERM);
         }});
  }
  // On a cluster every key of a device lives in its key shard; all gateways and readers
  // of the cluster must agree on the shard count, which the cluster stores.
  redis::connection probe(server.connection("shards"));
  // A server that cannot be reached, or refuses the log-in or the TLS handshake, is
  // said so at once with the fix; a set-up error (a certificate, a password, a
  // database) exits 2, as waiting does not cure it.
  if (std::string why; !probe.ensure_connected(why)) {
    const auto cause = redis::classify_connect_failure(why);
    spdlog::error("cannot use Redis at {}: {}", server.where.describe(), ports::describe(cause));
    return redis::is_setup_failure(cause) ? 2 : 1;
  }
  // Then: a URL whose scheme does not fit the server (a cluster node or a
  // sentinel named by redis://) fails every later step with a puzzling error.
  if (const std::string wrong = redis::wrong_url_scheme(probe); !wrong.empty()) {
    spdlog::error("--redis: {}", wrong);
    return 2;
  }
  std::string error;
  auto agreed = redis::agree_key_shards(probe, plan.telemetry_shards, error);
  if (!agreed) {
    spdlog::error("cannot use Redis at {}: {}", server.where.describe(), error);
    // A cluster that answers but disagrees (a stored count unlike --telemetry-shards)
    // is a usage error; one whose master for the count's key is down is not.
    const std::string cause = redis::classify_redis_failure(error).label;
    const bool transient =
        cause == "connection" || cause == "cluster_down" || cause == "loading" || cause == "busy";
    return server.where.via_cluster() && probe.connected() && !transient ? 2 : 1;
  }
  server.key_shards = std::move(*agreed);
  if (server.key_shards.tagged())
    spdlog::info("Redis Cluster {}: keys in {} shards", server.where.describe(),
                 server.key_shards.count());
  return 0;
}

int check_redis(const gateway_plan& plan, const gateway_redis& server,
                domain::persist_health& health) {
  if (const int code = check_persisting(plan, server, health); code != 0) return code;
  if (plan.ack_replicas > 0) warn_if_short_of_replicas(server.where, plan.ack_replicas);
  return 0;
}

int claim_instance(const gateway_plan& plan, const gateway_redis& server) {
  redis::connection conn(server.connection("claim"));
  std::vector<std::string> keys;
  for (std::uint32_t s = 0; s < server.key_shards.count(); ++s)
    keys.push_back(registry::keys::heartbeat(server.instance, server.key_shards.prefix(s)));
  const auto holder = registry::heartbeat_holder::parse(server.holder);
  const auto claim = registry::claim_instance_id(
      conn, server.instance, keys, holder ? *holder : registry::heartbeat_holder{},
      plan.registry.heartbeat_ttl, [](const std::string& line) { spdlog::warn("{}", line); });
  if (claim.claimed) return 0;
  spdlog::error("cannot start: {}", claim.refusal);
  return 1;
}

void hand_over_commands(const gateway_plan& plan, const gateway_redis& server) {
  const auto& shards = server.key_shards;
  registry::redis_registry_store registry(server.connection("shutdown"), server.instance, shards,
                                          server.holder);
  ports::store_failure failed;
  const auto released = registry.release_heartbeat(failed);
  if (!released) {
    spdlog::warn("commands: heartbeat not removed at shutdown: {}", failed.text());
    return;  // Redis is down: the janitor of another instance adopts the stream later.
  }
  if (!*released) {
    spdlog::warn(
        "heartbeat: left to the other process with instance id {}, and so is its command "
        "stream",
        server.instance);
    return;
  }
  commands::redis_command_store store(server.connection("shutdown"), server.instance,
                                      plan.command_max_payload, shards);
  if (std::string error; !store.load_library(error)) {
    spdlog::warn("commands: stream not handed over at shutdown: {}", error);
    return;
  }
  const auto counts = store.adopt_orphans(server.instance, failed);
  if (!counts)
    spdlog::warn("commands: stream not handed over at shutdown: {}", failed.text());
  else if (counts->handled > 0)
    spdlog::info("commands: {} unanswered command(s) handed over: {} re-routed, {} failed",
                 counts->handled, counts->rerouted, counts->failed);
}

}  // namespace tgw::infra::app
