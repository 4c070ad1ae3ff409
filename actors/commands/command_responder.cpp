#include "actors/commands/command_responder.hpp"

#include <deque>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/commands/command_messages.hpp"

namespace tgw::actors::commands {
namespace {

using infra::commands::command_entry;
using infra::commands::resolution;

struct responder_state {
  std::deque<std::pair<command_entry, resolution>> unpublished;
  bool retry_queued = false;
  std::chrono::milliseconds backoff{100};
};

}  // namespace

caf::behavior command_responder(caf::event_based_actor* self, const responder_config& config,
                                const std::shared_ptr<infra::commands::command_store>& store,
                                const std::shared_ptr<infra::metrics::gateway_counters>& counters) {
  auto state = std::make_shared<responder_state>();
  // Publishes what is waiting, oldest first; stops at the first failure and retries
  // later, so responses of one device keep their order.
  auto publish = [self, config, store, state, counters] {
    while (!state->unpublished.empty()) {
      auto& [entry, outcome] = state->unpublished.front();
      std::string error;
      if (!store->resolve(entry, outcome, error, config.journal_maxlen)) {
        counters->command_redis_errors.fetch_add(1, std::memory_order_relaxed);
        if (!state->retry_queued) {
          spdlog::warn("commands: cannot publish the response to {} ({} waiting): {}",
                       entry.command_id, state->unpublished.size(), error);
          state->retry_queued = true;
          self->delayed_send(self, state->backoff, retry_atom::value);
          state->backoff = std::min(state->backoff * 2, config.max_backoff);
        }
        return;
      }
      counters->commands_resolved.fetch_add(1, std::memory_order_relaxed);
      spdlog::debug("device {}: command {} {}{}{}", entry.target_imei, entry.command_id,
                    outcome.status, outcome.failure_reason.empty() ? "" : " ",
                    outcome.failure_reason);
      state->unpublished.pop_front();
    }
    state->backoff = std::chrono::milliseconds{100};
  };
  return {
      [state, publish](resolve_atom, command_entry& entry, resolution& outcome) {
        state->unpublished.emplace_back(std::move(entry), std::move(outcome));
        if (!state->retry_queued) publish();
      },
      [state, publish](retry_atom) {
        state->retry_queued = false;
        publish();
      },
      [config, store](dispatch_atom, const command_entry& entry) {
        std::string error;
        const bool ok = store->dispatched(entry, error, config.journal_maxlen);
        if (!ok)
          spdlog::warn("device {}: command {} dispatched but not journaled: {}", entry.target_imei,
                       entry.command_id, error);
        return ok;
      },
      [store](drain_off_atom, const std::string& imei) {
        std::string error;
        const auto moved = store->drain_offline(imei, error);
        if (!moved)
          spdlog::warn("device {}: offline commands not moved: {}", imei, error);
        else if (*moved > 0)
          spdlog::info("device {}: {} queued offline command(s) to deliver", imei, *moved);
      },
      [state](sync_atom) { return state->unpublished.empty(); },
  };
}

}  // namespace tgw::actors::commands
