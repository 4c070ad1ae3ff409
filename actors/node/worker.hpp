#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "actors/node/node_actors.hpp"
#include "actors/node/node_config.hpp"

namespace tgw::actors::node {

/// What the worker keeps between messages.
struct worker_state {
  static constexpr const char* name = "worker";
  std::string node;      ///< This node's id, for the line the worker ends with.
  bool active = false;   // false while this node is the emitter
  bool polling = false;  // a take or a handler is under way
  std::mt19937_64 rng;
  std::uint64_t handled = 0;
  std::uint64_t failed = 0;
  std::uint64_t dropped = 0;
  /// CAF destroys the state as the actor terminates: the worker's last line, with
  /// what it did.
  ~worker_state();
};

/// The worker role: while this node is not the emitter it takes messages from the
/// queue into its own processing list, "handles" each for a random time, and
/// finishes it as handled or, for `error_rate` of them, as failed into the error
/// list. A message killed mid-way stays in the processing list until a health check
/// returns it to the queue, so every message is finished exactly once.
worker_actor::behavior_type worker(worker_actor::stateful_pointer<worker_state> self,
                                   const node_config& config,
                                   const std::shared_ptr<ports::node_store>& store);

}  // namespace tgw::actors::node
