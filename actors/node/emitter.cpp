#include "actors/node/emitter.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/node/node_atoms.hpp"

namespace tgw::actors::node {
namespace {

constexpr std::chrono::milliseconds retry_delay{200};

struct emitter_state {
  bool active = false;
  std::int64_t epoch = -1;
  std::uint64_t generation = 0;  // ticks of an earlier activation are dropped
  std::uint64_t emitted = 0;
  std::uint64_t refused = 0;
};

}  // namespace

caf::behavior emitter(caf::event_based_actor* self, node_config config,
                      std::shared_ptr<infra::node::node_store> store) {
  auto state = std::make_shared<emitter_state>();
  self->attach_functor([config, state] {
    spdlog::info("node {}: emitter stopped after {} message(s), {} refused emit(s)", config.id,
                 state->emitted, state->refused);
  });
  return {
      [self, state](role_atom, bool is_emitter, std::int64_t epoch) {
        const bool start = is_emitter && (!state->active || epoch != state->epoch);
        state->active = is_emitter;
        state->epoch = epoch;
        if (start) self->send(self, tick_atom::value, ++state->generation);
      },
      [self, config, store, state](tick_atom, std::uint64_t generation) {
        if (!state->active || generation != state->generation) return;
        const infra::node::emit_result r = store->emit(config.id, state->epoch, config.emit_batch);
        if (r.accepted) {
          state->emitted += static_cast<std::uint64_t>(r.last_id - r.first_id + 1);
        } else if (store->last_error().empty()) {
          // The lease moved on while this node was not looking: stop until the
          // membership actor grants a new one.
          ++state->refused;
          state->active = false;
          spdlog::warn("node {}: emit refused, the lease at epoch {} is no longer ours", config.id,
                       state->epoch);
          return;
        }
        if (!r.accepted)  // Redis unreachable: retry without spinning
          self->delayed_send(self, retry_delay, tick_atom::value, generation);
        else if (config.emit_interval.count() == 0)
          self->send(self, tick_atom::value, generation);
        else
          self->delayed_send(self, config.emit_interval, tick_atom::value, generation);
      },
  };
}

}  // namespace tgw::actors::node
