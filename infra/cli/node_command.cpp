#include "infra/cli/node_command.hpp"
#include "infra/cli/log_options.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/cli/redis_tls_flags.hpp"
#include "infra/cli/value_checks.hpp"

#include <unistd.h>

#include <iostream>
#include <memory>
#include <random>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "infra/log/log.hpp"
#include "infra/node/redis_node_store.hpp"

namespace tgw::infra {
namespace {

int print_errors(const redis::endpoint& where) {
  node::redis_node_store store(
      {where, std::chrono::milliseconds{2000}, std::chrono::milliseconds{5000}, "tgw-node-errors"},
      {}, false);
  const auto errors = store.take_errors();
  if (!errors) {
    std::cerr << "tgw node: cannot read the error list: " << store.last_error() << '\n';
    return 1;
  }
  for (const std::string& e : *errors) std::cout << e << '\n';
  std::cerr << "tgw node: " << errors->size() << " error(s) printed and deleted\n";
  return 0;
}

std::string default_node_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device rd;
  return std::string(host[0] != '\0' ? host : "node") + "-" + std::to_string(getpid()) + "-" +
         std::to_string(rd() % 100000);
}

app::node_plan plan_node(const node_options& o, const redis::endpoint& where) {
  app::node_plan p;
  auto& c = p.node;
  c.id = o.id.empty() ? default_node_id() : o.id;
  c.health_interval = std::chrono::milliseconds{o.health_ms};
  c.emit_interval = std::chrono::milliseconds{o.interval_ms};
  c.emit_batch = o.batch > 0 ? o.batch : (o.interval_ms == 0 ? 100 : 1);
  c.work_min = std::chrono::milliseconds{0};
  c.work_max = std::chrono::milliseconds{o.work_ms};
  c.error_rate = o.error_rate;
  c.seed = std::random_device{}();
  p.where = where;
  p.timing = {std::chrono::milliseconds{o.inactive_ms}, std::chrono::milliseconds{o.ttl_ms},
              o.max_messages, o.queue_limit};
  p.record_handled = o.record_handled;
  return p;
}

}  // namespace

std::optional<redis::endpoint> node_options::endpoint(std::string& error) const {
  if (!redis_url.empty()) {
    auto where = redis::parse_redis_url(redis_url, error);
    if (where && !apply_redis_tls(redis_tls, *where, error)) return std::nullopt;
    return where;
  }
  if (redis_tls != redis::tls_options{}) {
    error = "--redis-tls-* options are for a rediss:// --redis; --rhost is plain";
    return std::nullopt;
  }
  redis::endpoint e;
  e.host = rhost;
  e.port = rport;
  e.db = rdb;
  return e;
}

void add_node_command(CLI::App& app, const node_runner& run, int& exit_code) {
  auto o = std::make_shared<node_options>();
  CLI::App* cmd = app.add_subcommand(
      "node",
      "A separate system, not part of the gateway: a cluster node of the emitter/worker\n"
      "cluster (docs/NODE.md). Nodes coordinate only through Redis; one emitter pushes a message\n"
      "into nodes:queue every interval, the others handle them, failures go to the\n"
      "error list. Stops cleanly on SIGINT/SIGTERM.");
  cmd->add_flag("--getErrors", o->get_errors,
                "Print every message of the error list, delete them, exit")
      ->envname("TGW_NODE_GET_ERRORS");
  cmd->add_option("--rhost", o->rhost, "Redis host")->envname("TGW_RHOST")->capture_default_str();
  cmd->add_option("--rport", o->rport, "Redis port")->envname("TGW_RPORT")->capture_default_str();
  cmd->add_option("--rdb", o->rdb, "Redis database")
      ->envname("TGW_RDB")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--redis", o->redis_url,
                  "redis://[user:password@]host:port/db, unix:///path?db=N, "
                  "redis+sentinel://[user:password@]host:port[,host:port...]/MASTER[?db=N] or "
                  "redis+cluster://[user:password@]host:port[,host:port...] (rediss... for "
                  "TLS); overrides --rhost/--rport/--rdb")
      ->envname("TGW_REDIS")
      ->check(redis_url_check());
  add_redis_tls_options(cmd, o->redis_tls);
  cmd->add_option("--id", o->id, "Node id (default: host-pid-random)")->envname("TGW_NODE_ID");
  cmd->add_option("--interval", o->interval_ms, "Emit period in ms; 0 emits as fast as possible")
      ->envname("TGW_NODE_INTERVAL")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "Messages per emit (default 1, or 100 with --interval 0)")
      ->envname("TGW_NODE_BATCH")
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--work-ms", o->work_ms, "Handler time drawn uniformly from 0..N ms")
      ->envname("TGW_NODE_WORK_MS")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--error-rate", o->error_rate, "Share of messages whose handler fails")
      ->envname("TGW_NODE_ERROR_RATE")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--health-ms", o->health_ms, "Health check period")
      ->envname("TGW_NODE_HEALTH_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--inactive-ms", o->inactive_ms, "Silence after which a node is removed")
      ->envname("TGW_NODE_INACTIVE_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--ttl-ms", o->ttl_ms, "TTL of the nodes:* keys, refreshed while nodes live")
      ->envname("TGW_NODE_TTL_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_flag("--record-handled", o->record_handled,
                "Count each handled message in the nodes:handled hash (for soak checks)")
      ->envname("TGW_NODE_RECORD_HANDLED");
  cmd->add_option("--max-messages", o->max_messages,
                  "Stop emitting once the cluster has emitted this many messages (0: never)")
      ->envname("TGW_NODE_MAX_MESSAGES")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--queue-limit", o->queue_limit,
                  "The emitter waits while nodes:queue holds this many messages (0: no limit)")
      ->envname("TGW_NODE_QUEUE_LIMIT")
      ->check(non_negative_number())
      ->capture_default_str();
  add_log_options(cmd, o->log_level, o->log_format);
  cmd->callback([o, run, &exit_code] {
    setup_logging(o->log_level, o->log_format);
    std::string error;
    const auto where = o->endpoint(error);
    if (!where) {
      std::cerr << "tgw node: " << error << '\n';
      exit_code = 2;
      return;
    }
    // A server that cannot serve, or a cluster node or a sentinel reached as a plain
    // server, fails every call with a puzzling error: say why and what to do instead.
    bool usage = false;
    if (!probe_redis(*where, error, usage)) {
      std::cerr << "tgw node: " << error << '\n';
      exit_code = usage ? 2 : 1;
      return;
    }
    exit_code = o->get_errors ? print_errors(*where) : run(plan_node(*o, *where));
  });
}

}  // namespace tgw::infra
