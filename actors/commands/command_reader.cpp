#include "actors/commands/command_reader.hpp"

#include <unordered_set>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/commands/command_atoms.hpp"
#include "actors/domain/failure_log.hpp"

namespace tgw::actors::commands {
namespace {

using ports::command_entry;
using ports::resolution;

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

command_reader_actor::behavior_type command_reader(
    command_reader_actor::stateful_pointer<reader_state> self, const reader_config& config,
    const std::shared_ptr<ports::command_store>& store,
    const std::shared_ptr<const session_lookup>& sessions,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters) {
  // The actor's own: its handlers run only while it does.
  reader_state* state = &self->state;
  state->log.emplace(domain::failure_log::settings{"command reader",
                                                   "commands wait in this instance's stream",
                                                   "read(s) failed", config.failure_log_interval});

  // Answers an entry no session will take, acknowledging it in the same step.
  auto refuse = [config, store, counters](const command_entry& e, std::string reason) {
    ports::store_failure error;
    counters->commands_refused.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("device {}: command {} failed: {}", e.target_imei.empty() ? "?" : e.target_imei,
                 e.command_id.empty() ? e.entry_id : e.command_id, reason);
    if (!store->resolve(e, resolution{"failed", "", reason}, error, config.journal_maxlen)) {
      // Left pending: re-read and answered after the reconnect.
      spdlog::warn("commands: cannot answer entry {}: {}", e.entry_id, error.text());
      return false;
    }
    counters->command_outcomes[infra::metrics::command_outcome_index("failed", reason)].fetch_add(
        1, std::memory_order_relaxed);
    return true;
  };

  // Answers what no session will take, then journals command_dispatched for the rest
  // in one pipelined round trip and hands each to its session: the event is in the
  // journal before the device can see the command, and the session writes at once.
  auto dispatch = [config, store, state, sessions, refuse,
                   counters](std::vector<command_entry>& entries) {
    std::vector<std::pair<command_target_actor, command_entry*>> deliverable;
    for (command_entry& e : entries) {
      // Delivered to this group again: a failover to a replica that had not yet seen
      // the first delivery. Its session has it already.
      if (state->with_sessions.contains(e.entry_id)) continue;
      counters->commands_received.fetch_add(1, std::memory_order_relaxed);
      if (!e.malformed.empty()) {
        if (e.control_characters) counters->refusals.count(infra::metrics::refusal::command_text);
        refuse(e, "malformed: " + e.malformed);
      } else if (e.expires_at > 0 && unix_now() > e.expires_at) {
        refuse(e, "expired_before_delivery");
      } else if (command_target_actor session = sessions->command_target(e.target_imei); !session) {
        refuse(e, "socket_closed");
      } else {
        deliverable.emplace_back(std::move(session), &e);
      }
    }
    if (deliverable.empty()) return;
    std::vector<const command_entry*> events;
    events.reserve(deliverable.size());
    for (const auto& [session, e] : deliverable) events.push_back(e);
    const std::vector<ports::dispatch_outcome> journaled =
        store->dispatched_all(events, config.journal_maxlen);
    for (std::size_t i = 0; i < deliverable.size(); ++i) {
      auto& [session, e] = deliverable[i];
      if (journaled[i].status == ports::dispatch_status::answered_already) {
        // Answered already: a copy a janitor re-routed from an instance that died after
        // its device answered the original. Dropped from the stream, not delivered.
        ports::store_failure error;
        if (!store->resolve(*e, resolution{"failed", "", "answered_already"}, error,
                            config.journal_maxlen))
          // Left pending: re-read and answered after the next reconnect.
          spdlog::warn("commands: cannot drop answered copy {}: {}", e->entry_id, error.text());
        continue;
      }
      if (journaled[i].status == ports::dispatch_status::not_journaled)
        spdlog::warn("device {}: command {} delivered without its dispatch event: {}",
                     e->target_imei, e->command_id, journaled[i].failure.text());
      state->with_sessions.insert(e->entry_id);
      caf::anon_send(session, command_atom::value, std::move(*e));
    }
  };

  auto failed = [self, config, state](const ports::store_failure& error) {
    state->log->failed(error.cause, 1, domain::clock::now());
    state->caught_up = false;
    self->delayed_send(self, state->backoff, read_atom::value);
    state->backoff = std::min(state->backoff * 2, config.max_backoff);
  };

  self->send(self, read_atom::value);
  return {
      [self, config, store, state, dispatch, failed](read_atom) {
        ports::store_failure error;
        if (!state->caught_up) {
          if (!store->prepare(error)) return failed(error);
          auto pending = store->read_pending(error);
          if (!pending) return failed(error);
          // What is no longer pending was resolved: forget it. What is pending and not
          // with a session was delivered by Redis but never reached us: deliver it now.
          std::unordered_set<std::string> pending_ids;
          for (const command_entry& e : *pending) pending_ids.insert(e.entry_id);
          std::erase_if(state->with_sessions,
                        [&](const std::string& id) { return !pending_ids.contains(id); });
          std::vector<command_entry> unseen;
          for (command_entry& e : *pending)
            if (!state->with_sessions.contains(e.entry_id)) unseen.push_back(std::move(e));
          if (!unseen.empty())
            spdlog::info("commands: {} pending command(s) re-read", unseen.size());
          dispatch(unseen);
          state->log->succeeded(domain::clock::now());
          state->backoff = std::chrono::milliseconds{100};
          state->caught_up = true;
        }
        auto fresh = store->read_new(config.block, config.count, error);
        if (!fresh) return failed(error);
        dispatch(*fresh);
        // Bounded memory: once the set grows, the next round re-reads the pending list
        // and keeps only ids that are still unresolved.
        if (state->with_sessions.size() > 4096) state->caught_up = false;
        self->send(self, read_atom::value);
      },
  };
}

}  // namespace tgw::actors::commands
