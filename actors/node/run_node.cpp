#include "actors/node/run_node.hpp"

#include <unistd.h>

#include <random>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/node/emitter.hpp"
#include "actors/node/membership.hpp"
#include "actors/node/worker.hpp"
#include "infra/node/redis_node_store.hpp"
#include "infra/process/termination.hpp"

namespace tgw::actors::node {
namespace {

std::string default_node_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device rd;
  return std::string(host[0] != '\0' ? host : "node") + "-" + std::to_string(getpid()) + "-" +
         std::to_string(rd() % 100000);
}

node_config make_config(const infra::node_options& o) {
  node_config c;
  c.id = o.id.empty() ? default_node_id() : o.id;
  c.health_interval = std::chrono::milliseconds{o.health_ms};
  c.emit_interval = std::chrono::milliseconds{o.interval_ms};
  c.emit_batch = o.batch > 0 ? o.batch : (o.interval_ms == 0 ? 100 : 1);
  c.work_min = std::chrono::milliseconds{0};
  c.work_max = std::chrono::milliseconds{o.work_ms};
  c.error_rate = o.error_rate;
  c.seed = std::random_device{}();
  return c;
}

}  // namespace

int run_node(const infra::node_options& options, const infra::redis::endpoint& where) {
  const node_config config = make_config(options);
  const infra::node::node_timing timing{std::chrono::milliseconds{options.inactive_ms},
                                        std::chrono::milliseconds{options.ttl_ms},
                                        options.max_messages, options.queue_limit};
  auto make_store = [&](const char* role, std::chrono::milliseconds io_timeout) {
    infra::redis::connection::options c{where, std::chrono::milliseconds{2000}, io_timeout,
                                        "tgw-node-" + config.id + "-" + role};
    return std::make_shared<infra::node::redis_node_store>(c, timing, options.record_handled);
  };
  const std::chrono::milliseconds io_timeout{2000};
  auto membership_store = make_store("membership", io_timeout);
  if (!membership_store->load_library()) {
    spdlog::error("node {}: cannot start: {} ({})", config.id, membership_store->last_error(),
                  where.describe());
    return 1;
  }
  spdlog::info("node {}: starting on {} (emit every {} ms, batch {}, error rate {})", config.id,
               where.describe(), config.emit_interval.count(), config.emit_batch,
               config.error_rate);

  caf::actor_system_config cfg;
  // Every role runs on a thread of its own (detached) because the store blocks; the
  // scheduler only runs CAF's housekeeping.
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system system{cfg};
  auto emitting = system.spawn<caf::detached>(emitter, config, make_store("emitter", io_timeout));
  auto working = system.spawn<caf::detached>(
      worker, config, make_store("worker", config.take_wait + std::chrono::milliseconds{2000}));
  auto member = system.spawn<caf::detached>(membership, config, membership_store,
                                            std::vector<caf::actor>{emitting, working});

  const int signal = infra::process::wait_for_termination_signal();
  spdlog::info("node {}: signal {} received, leaving", config.id, signal);
  caf::anon_send_exit(member, caf::exit_reason::user_shutdown);
  system.await_all_actors_done();
  return 0;
}

}  // namespace tgw::actors::node
