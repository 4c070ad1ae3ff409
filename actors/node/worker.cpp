#include "actors/node/worker.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/node/node_atoms.hpp"

namespace tgw::actors::node {
namespace {

constexpr std::chrono::milliseconds retry_delay{200};

}  // namespace

worker_state::~worker_state() {
  if (node.empty()) return;  // never started
  spdlog::info("node {}: worker stopped after {} handled, {} failed, {} dropped", node, handled,
               failed, dropped);
}

worker_actor::behavior_type worker(worker_actor::stateful_pointer<worker_state> self,
                                   const node_config& config,
                                   const std::shared_ptr<ports::node_store>& store) {
  // The actor's own: its handlers run only while it does.
  worker_state* state = &self->state;
  state->node = config.id;
  state->rng.seed(config.seed);
  return {
      [self, state](role_atom, bool is_emitter, std::int64_t) {
        state->active = !is_emitter;
        if (state->active && !state->polling) {
          state->polling = true;
          self->send(self, take_atom::value);
        }
      },
      [self, config, store, state](take_atom) {
        if (!state->active) {
          state->polling = false;
          return;
        }
        auto message = store->take(config.id, config.take_wait);
        if (!message) {
          // An empty queue already waited take_wait; a store failure returns at once
          // and must not turn into a busy loop.
          if (!store->last_failure().failed())
            self->send(self, take_atom::value);
          else
            self->delayed_send(self, retry_delay, take_atom::value);
          return;
        }
        std::uniform_int_distribution<std::int64_t> work(config.work_min.count(),
                                                         config.work_max.count());
        const std::chrono::milliseconds duration{work(state->rng)};
        if (duration.count() == 0)
          self->send(self, done_atom::value, std::move(*message));
        else
          self->delayed_send(self, duration, done_atom::value, std::move(*message));
      },
      [self, config, state](done_atom, std::string& message) {
        std::bernoulli_distribution fails(config.error_rate);
        self->send(self, finish_atom::value, std::move(message), fails(state->rng));
      },
      [self, config, store, state](finish_atom, std::string& message, bool failed) {
        const auto result = store->complete(config.id, message, failed, "handler failed");
        if (!result.accepted && store->last_failure().failed()) {
          // The store failed: the message is still ours; finish it once it is back.
          self->delayed_send(self, retry_delay, finish_atom::value, std::move(message), failed);
          return;
        }
        if (!result.accepted) {
          // Returned to the queue while this node was paused: another node owns it now.
          ++state->dropped;
          spdlog::warn("node {}: message {} was reassigned; result dropped", config.id, message);
        } else if (failed) {
          ++state->failed;
        } else {
          ++state->handled;
        }
        self->send(self, take_atom::value);
      },
  };
}

}  // namespace tgw::actors::node
