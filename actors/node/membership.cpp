#include "actors/node/membership.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/node/node_atoms.hpp"

namespace tgw::actors::node {

membership_actor::behavior_type membership(
    membership_actor::stateful_pointer<membership_state> self, const node_config& config,
    const std::shared_ptr<ports::node_store>& store, const std::vector<role_actor>& roles) {
  // The actor's own: its handlers run only while it does.
  membership_state* state = &self->state;
  auto announce = [self, roles, state] {
    for (const role_actor& r : roles)
      self->send(r, role_atom::value, state->is_emitter, state->epoch);
  };
  auto on_view = [config, state, announce](const ports::membership_view& view) {
    if (view.removed > 0)
      spdlog::info("node {}: removed {} inactive node(s), returned {} message(s) to the queue",
                   config.id, view.removed, view.returned);
    else if (view.returned > 0)
      spdlog::info("node {}: returned {} message(s) handed to removed node(s) after their removal",
                   config.id, view.returned);
    if (view.rejoined)
      spdlog::warn("node {}: had been removed as inactive; registered again", config.id);
    const bool emitter_now = view.emitter == config.id;
    if (emitter_now != state->is_emitter || view.epoch != state->epoch) {
      if (emitter_now != state->is_emitter)
        spdlog::info("node {}: {} (emitter {} at epoch {})", config.id,
                     emitter_now ? "now the emitter" : "now a worker",
                     view.emitter.empty() ? "none" : view.emitter, view.epoch);
      state->is_emitter = emitter_now;
      state->epoch = view.epoch;
      announce();
    }
  };
  self->set_exit_handler([self, config, store, roles](caf::exit_msg& msg) {
    store->leave(config.id);
    spdlog::info("node {}: left the cluster", config.id);
    for (const role_actor& r : roles) self->send_exit(r, msg.reason);
    self->quit(msg.reason);
  });
  self->send(self, health_atom::value);
  return {
      [self, config, store, state, on_view](health_atom) {
        auto view = state->joined ? store->health_check(config.id) : store->join(config.id);
        if (view) {
          if (state->store_down) spdlog::info("node {}: Redis reachable again", config.id);
          state->store_down = false;
          if (!state->joined) spdlog::info("node {}: joined the cluster", config.id);
          state->joined = true;
          on_view(*view);
        } else if (!state->store_down) {
          state->store_down = true;
          spdlog::warn("node {}: membership call failed: {}", config.id,
                       store->last_failure().text());
        }
        self->delayed_send(self, config.health_interval, health_atom::value);
      },
  };
}

}  // namespace tgw::actors::node
