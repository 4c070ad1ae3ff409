#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/node/node_actors.hpp"
#include "actors/node/node_config.hpp"

namespace tgw::actors::node {

/// What the membership actor keeps between messages.
struct membership_state {
  static constexpr const char* name = "membership";
  // Declared so that the struct is no aggregate: CAF 0.17 builds a state as
  // State(self) whenever that compiles, and under C++20 an aggregate does, its first
  // member taken from the actor's pointer (joined would start out true, and the node
  // would never join).
  membership_state() = default;
  bool joined = false;
  bool is_emitter = false;
  std::int64_t epoch = -1;
  bool store_down = false;  // logged once per outage, not once per tick
};

/// The membership role: joins the cluster, runs the health check every
/// `health_interval`, and tells `roles` (emitter and worker) whenever this node gains
/// or loses the emitter lease, with the lease's epoch. On exit it leaves the cluster,
/// returning its unfinished messages and passing the lease on.
membership_actor::behavior_type membership(
    membership_actor::stateful_pointer<membership_state> self, const node_config& config,
    const std::shared_ptr<ports::node_store>& store, const std::vector<role_actor>& roles);

}  // namespace tgw::actors::node
