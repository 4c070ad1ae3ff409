#include "infra/app/run_node.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/node/emitter.hpp"
#include "actors/node/membership.hpp"
#include "actors/node/worker.hpp"
#include "infra/node/redis_node_store.hpp"
#include "infra/process/termination.hpp"

namespace tgw::infra::app {

int run_node(const node_plan& plan) {
  const actors::node::node_config& config = plan.node;
  const redis::endpoint& where = plan.where;
  auto make_store = [&](const char* role, std::chrono::milliseconds io_timeout) {
    redis::connection::options c{where, std::chrono::milliseconds{2000}, io_timeout,
                                 "tgw-node-" + config.id + "-" + role};
    return std::make_shared<node::redis_node_store>(c, plan.timing, plan.record_handled);
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
  auto emitting =
      system.spawn<caf::detached>(actors::node::emitter, config, make_store("emitter", io_timeout));
  auto working = system.spawn<caf::detached>(
      actors::node::worker, config,
      make_store("worker", config.take_wait + std::chrono::milliseconds{2000}));
  auto member =
      system.spawn<caf::detached>(actors::node::membership, config, membership_store,
                                  std::vector<actors::node::role_actor>{emitting, working});

  const int signal = process::wait_for_termination_signal();
  spdlog::info("node {}: signal {} received, leaving", config.id, signal);
  caf::anon_send_exit(member, caf::exit_reason::user_shutdown);
  system.await_all_actors_done();
  return 0;
}

}  // namespace tgw::infra::app
