#include "actors/commands/command_responder.hpp"

#include <deque>
#include <iterator>
#include <vector>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/commands/command_atoms.hpp"
#include "actors/domain/failure_log.hpp"

namespace tgw::actors::commands {
namespace {

using ports::command_entry;
using ports::resolution;

}  // namespace

command_responder_self_actor::behavior_type command_responder(
    command_responder_self_actor::stateful_pointer<responder_state> self,
    const responder_config& config, const std::shared_ptr<ports::command_store>& store,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters) {
  // The actor's own: its handlers run only while it does.
  responder_state* state = &self->state;
  state->log.emplace(domain::failure_log::settings{
      "command responses", "publishers wait for the answers of commands",
      "response(s) not published", config.failure_log_interval});

  // Every outcome gathered in the mailbox goes out in one pipelined round trip, like
  // the telemetry writer's batches: under load the calls share round trips instead of
  // queueing behind each other. A resolve that fails stays queued; re-running one
  // that did succeed is harmless, because tgw_cmd_resolve publishes once per entry.
  auto flush = [self, config, store, state, counters] {
    state->flush_queued = false;
    if (state->backing_off || state->unpublished.empty()) return;
    // Taken out whole: nothing arrives while the store call blocks.
    std::vector<std::pair<command_entry, resolution>> batch(
        std::make_move_iterator(state->unpublished.begin()),
        std::make_move_iterator(state->unpublished.end()));
    state->unpublished.clear();
    const std::vector<ports::store_failure> errors =
        store->resolve_all(batch, config.journal_maxlen);
    std::deque<std::pair<command_entry, resolution>> refused;
    ports::store_failure last_error;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto& item = batch[i];
      if (!errors[i].failed()) {
        counters->commands_resolved.fetch_add(1, std::memory_order_relaxed);
        counters
            ->command_outcomes[infra::metrics::command_outcome_index(item.second.status,
                                                                     item.second.failure_reason)]
            .fetch_add(1, std::memory_order_relaxed);
        spdlog::debug("device {}: command {} {}{}{}", item.first.target_imei, item.first.command_id,
                      item.second.status, item.second.failure_reason.empty() ? "" : " ",
                      item.second.failure_reason);
      } else {
        last_error = errors[i];
        refused.push_back(std::move(item));
      }
    }
    if (refused.empty()) {
      state->backoff = std::chrono::milliseconds{100};
      // A success soon after a failure ends the spell only once no failure followed
      // for a while: look again then, as no later success may come.
      if (const auto settle_in = state->log->succeeded(domain::clock::now());
          settle_in > settle_in.zero() && !state->settle_queued) {
        state->settle_queued = true;
        self->delayed_send(self, settle_in, settle_atom::value);
      }
      return;
    }
    counters->command_redis_errors.fetch_add(1, std::memory_order_relaxed);
    // Kept and retried; the log says so once per spell, not once per retry.
    state->log->failed(last_error.cause, refused.size(), domain::clock::now());
    // Refused ones go back in front of anything that arrived meanwhile: order kept.
    for (auto it = refused.rbegin(); it != refused.rend(); ++it)
      state->unpublished.push_front(std::move(*it));
    state->backing_off = true;
    self->delayed_send(self, state->backoff, retry_atom::value);
    state->backoff = std::min(state->backoff * 2, config.max_backoff);
  };
  auto schedule = [self, state] {
    if (state->flush_queued) return;
    state->flush_queued = true;
    self->send(self, flush_atom::value);
  };

  return {
      [state, schedule](resolve_atom, command_entry& entry, resolution& outcome) {
        state->unpublished.emplace_back(std::move(entry), std::move(outcome));
        schedule();
      },
      [flush](flush_atom) { flush(); },
      [self, state](settle_atom) {
        // A failure and a success since it was scheduled move the end later: look again.
        const auto again = state->log->settled(domain::clock::now());
        if (again > again.zero())
          self->delayed_send(self, again, settle_atom::value);
        else
          state->settle_queued = false;
      },
      [state, flush](retry_atom) {
        state->backing_off = false;
        flush();
      },
      [store](drain_off_atom, const std::string& imei) {
        ports::store_failure error;
        const auto moved = store->drain_offline(imei, error);
        if (!moved)
          spdlog::warn("device {}: offline commands not moved: {}", imei, error.text());
        else if (*moved > 0)
          spdlog::info("device {}: {} queued offline command(s) to deliver", imei, *moved);
      },
      // Answered after everything sent before it: true when nothing is left unpublished.
      [state, flush](sync_atom) {
        flush();
        return state->unpublished.empty();
      },
  };
}

}  // namespace tgw::actors::commands
