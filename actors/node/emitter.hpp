#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "actors/node/node_actors.hpp"
#include "actors/node/node_config.hpp"

namespace tgw::actors::node {

/// What the emitter keeps between messages.
struct emitter_state {
  static constexpr const char* name = "emitter";
  std::string node;  ///< This node's id, for the line the emitter ends with.
  bool active = false;
  std::int64_t epoch = -1;
  std::uint64_t generation = 0;  // ticks of an earlier activation are dropped
  std::uint64_t emitted = 0;
  std::uint64_t refused = 0;
  /// CAF destroys the state as the actor terminates: the emitter's last line, with
  /// what it did.
  ~emitter_state();
};

/// The emitter role: while the membership actor says this node holds the lease, it
/// pushes `emit_batch` messages every `emit_interval`. Every emit names the lease's
/// epoch and Redis refuses it if the lease has moved on, so a node that was paused
/// past its lease emits nothing when it wakes up.
emitter_actor::behavior_type emitter(emitter_actor::stateful_pointer<emitter_state> self,
                                     const node_config& config,
                                     const std::shared_ptr<ports::node_store>& store);

}  // namespace tgw::actors::node
