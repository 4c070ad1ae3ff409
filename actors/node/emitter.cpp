#include "actors/node/emitter.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/node/node_atoms.hpp"

namespace tgw::actors::node {
namespace {

constexpr std::chrono::milliseconds retry_delay{200};
constexpr std::chrono::milliseconds queue_full_delay{5};

}  // namespace

emitter_state::~emitter_state() {
  if (node.empty()) return;  // never started
  spdlog::info("node {}: emitter stopped after {} message(s), {} refused emit(s)", node, emitted,
               refused);
}

emitter_actor::behavior_type emitter(emitter_actor::stateful_pointer<emitter_state> self,
                                     const node_config& config,
                                     const std::shared_ptr<ports::node_store>& store) {
  // The actor's own: its handlers run only while it does.
  emitter_state* state = &self->state;
  state->node = config.id;
  return {
      [self, state](role_atom, bool is_emitter, std::int64_t epoch) {
        const bool start = is_emitter && (!state->active || epoch != state->epoch);
        state->active = is_emitter;
        state->epoch = epoch;
        if (start) self->send(self, emit_atom::value, ++state->generation);
      },
      [self, config, store, state](emit_atom, std::uint64_t generation) {
        if (!state->active || generation != state->generation) return;
        using status = ports::emit_result::status;
        const ports::emit_result r = store->emit(config.id, state->epoch, config.emit_batch);
        switch (r.outcome) {
          case status::emitted:
            state->emitted += static_cast<std::uint64_t>(r.last_id - r.first_id + 1);
            break;
          case status::exhausted:
            spdlog::info("node {}: the cluster's message budget is spent; emitting stops",
                         config.id);
            state->active = false;
            return;
          case status::queue_full:
            self->delayed_send(self, queue_full_delay, emit_atom::value, generation);
            return;
          case status::refused:
            if (store->last_failure().failed()) {  // the store failed: retry, do not spin
              self->delayed_send(self, retry_delay, emit_atom::value, generation);
              return;
            }
            // The lease moved on while this node was not looking: stop until the
            // membership actor grants a new one.
            ++state->refused;
            state->active = false;
            spdlog::warn("node {}: emit refused, the lease at epoch {} is no longer ours",
                         config.id, state->epoch);
            return;
        }
        if (config.emit_interval.count() == 0)
          self->send(self, emit_atom::value, generation);
        else
          self->delayed_send(self, config.emit_interval, emit_atom::value, generation);
      },
  };
}

}  // namespace tgw::actors::node
