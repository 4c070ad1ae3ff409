#include "actors/registry/registry_actor.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/domain/failure_log.hpp"
#include "codecs/imei.hpp"

namespace tgw::actors::registry {

std::vector<std::string> registry_state::held_imeis() const {
  std::vector<std::string> all;
  all.reserve(held.size());
  for (const auto& entry : held) all.push_back(codecs::imei_from_key(entry.first));
  return all;
}

namespace {

// Two gateways with one instance id share its registry entries, reverse index and
// command stream: commands reach whichever reads first. Said at error when it starts,
// when the holder changes, and every failure-log interval while it lasts.
void say_taken(const registry_config& config, registry_state& state,
               const ports::heartbeat_outcome& outcome, const std::string& instance) {
  const std::string& holder = outcome.taken_by;
  const auto now = domain::clock::now();
  if (holder == state.taken_by && now - state.taken_said_at < config.failure_log_interval) return;
  state.taken_by = holder;
  state.taken_said_at = now;
  spdlog::error(
      "heartbeat: instance {}'s heartbeat is held by {}: another tgw serve runs with the same "
      "--instance-id; this one leaves the heartbeat to it and is not ready (/readyz "
      "heartbeat_taken); stop one of them, or give it another --instance-id",
      instance, outcome.taken_by_described);
}

}  // namespace

registry_self_actor::behavior_type registry(
    registry_self_actor::stateful_pointer<registry_state> self, const registry_config& config,
    const std::shared_ptr<ports::registry_store>& store,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters) {
  registry_state* state = &self->state;
  state->registry_log.emplace(domain::failure_log::settings{
      "registry", "devices stay connected and the registry is repaired when Redis answers",
      "registry write(s) failed", config.failure_log_interval});
  state->heartbeat_log.emplace(domain::failure_log::settings{
      "heartbeat",
      "other instances may take this one for dead, evict its devices and adopt its commands",
      "heartbeat(s) not written", config.failure_log_interval});
  // What failed leads the line; the store's adapter named the cause and its fix.
  auto failure = [state, counters](const std::string& what, const ports::store_failure& failed) {
    counters->registry_failures.fetch_add(1);
    state->repair_owed = true;
    auto& log = what == "heartbeat" ? *state->heartbeat_log : *state->registry_log;
    ports::failure_cause cause = failed.cause;
    cause.detail = what + ": " + cause.detail;
    log.failed(cause, 1, domain::clock::now());
    state->down = true;
  };
  auto repair = [store, state, counters](ports::store_failure& error) {
    const std::vector<std::string> all = state->held_imeis();
    const auto left = store->reassert(all, error);
    if (!left) return false;
    state->repair_owed = false;
    if (state->down) spdlog::info("registry: {} device(s) re-asserted", all.size() - *left);
    state->registry_log->succeeded(domain::clock::now());
    if (*left > 0)
      spdlog::info(
          "registry: {} device(s) left to the live instance they reconnected to; their "
          "sessions here are closing",
          *left);
    state->down = false;
    counters->registry_held.store(static_cast<std::int64_t>(state->held.size()));
    return true;
  };
  // Each heartbeat, the devices held here must still be in this instance's reverse
  // index. One drops out when another instance registers it; if that registration was
  // stale (a session whose device had already moved here), the other instance's
  // unregister then deletes the entry and nothing else would put it back.
  auto check_index = [store, state, failure] {
    const std::vector<std::string> all = state->held_imeis();
    ports::store_failure error;
    const auto missing = store->missing_from_index(all, error);
    if (!missing) {
      failure("index check", error);
      return;
    }
    if (missing->empty()) return;
    const auto left = store->reassert(*missing, error);
    if (!left) {
      failure("re-assert", error);
      return;
    }
    // Devices another live instance holds are left alone and found again each beat
    // until the stale session closes on one side: not worth a line each time.
    spdlog::log(*left < missing->size() ? spdlog::level::info : spdlog::level::debug,
                "registry: {} device(s) held here had lost their entry; {} re-asserted, {} left to "
                "the live instance holding them",
                missing->size(), missing->size() - *left, *left);
  };
  self->send(self, beat_atom::value);
  return {
      [store, state, counters, failure](register_atom, const std::string& imei) {
        const auto key = codecs::imei_key(imei);
        if (!key) {
          // Sessions register only after the IMEI was validated.
          spdlog::error("registry: '{}' not registered: not an IMEI", imei);
          return;
        }
        ++state->held[*key];
        counters->registry_held.store(static_cast<std::int64_t>(state->held.size()));
        ports::store_failure error;
        if (!store->register_device(imei, error))
          failure("register " + imei, error);
        else if (!state->repair_owed)
          state->registry_log->succeeded(domain::clock::now());
      },
      [store, state, counters, failure](unregister_atom, const std::string& imei) {
        const auto key = codecs::imei_key(imei);
        if (!key) return;
        auto it = state->held.find(*key);
        if (it == state->held.end()) return;
        if (--it->second > 0) return;  // another session of this device is still here
        state->held.erase(it);
        counters->registry_held.store(static_cast<std::int64_t>(state->held.size()));
        ports::store_failure error;
        if (!store->unregister_device(imei, error))
          failure("unregister " + imei, error);
        else if (!state->repair_owed)
          state->registry_log->succeeded(domain::clock::now());
      },
      [store, state](unreg_all_atom) -> std::size_t {
        ports::store_failure error;
        const std::vector<std::string> all = state->held_imeis();
        const auto deleted = store->unregister_all(all, error);
        if (!deleted) {
          spdlog::error("registry: unregistering {} devices at shutdown failed: {}", all.size(),
                        error.text());
          return 0;
        }
        spdlog::info("registry: unregistered {} of {} devices (the rest had moved)", *deleted,
                     all.size());
        state->held.clear();
        return *deleted;
      },
      [self, config, store, state, failure, repair, check_index, counters](beat_atom) {
        ports::store_failure error;
        const auto outcome = store->heartbeat(config.heartbeat_ttl, error);
        const bool written = outcome && outcome->taken_by.empty();
        counters->heartbeat_ok.store(written);
        counters->heartbeat_taken.store(outcome && !outcome->taken_by.empty());
        counters->heartbeat_at_ms.store(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
        if (!outcome) {
          failure("heartbeat", error);
        } else if (!outcome->taken_by.empty()) {
          say_taken(config, *state, *outcome, store->instance_id());
        } else {
          if (!state->taken_by.empty()) {
            spdlog::warn("heartbeat: instance {} holds its heartbeat again", store->instance_id());
            state->taken_by.clear();
          }
          state->heartbeat_log->succeeded(domain::clock::now());
          if (outcome->was_missing && !state->held.empty()) {
            spdlog::warn(
                "registry: own heartbeat key was missing (presumed dead); re-asserting "
                "{} devices",
                state->held.size());
            state->repair_owed = true;
          }
        }
        if (ports::store_failure still; written && state->repair_owed && !repair(still))
          failure("repair", still);
        if (written && !state->repair_owed && !state->held.empty()) check_index();
        self->delayed_send(self,
                           state->repair_owed
                               ? std::min(config.repair_interval, config.heartbeat_interval)
                               : config.heartbeat_interval,
                           beat_atom::value);
      },
  };
}

namespace {

void adopt_command_streams(ports::command_store& commands,
                           infra::metrics::gateway_counters& counters) {
  ports::store_failure error;
  const auto dead = commands.orphan_candidates(error);
  if (!dead) {
    spdlog::warn("janitor: cannot list command streams: {}", error.text());
    return;
  }
  for (const std::string& instance : *dead) {
    if (instance == commands.instance_id()) continue;  // our own heartbeat lapsed: not dead
    const auto counts = commands.adopt_orphans(instance, error);
    if (!counts) {
      spdlog::warn("janitor: command stream of {} not adopted: {}", instance, error.text());
      continue;
    }
    counters.commands_adopted.fetch_add(counts->handled, std::memory_order_relaxed);
    if (counts->handled > 0)
      spdlog::info("janitor: {} command(s) of dead instance {}: {} re-routed, {} failed",
                   counts->handled, instance, counts->rerouted, counts->failed);
  }
}

}  // namespace

janitor_actor::behavior_type janitor(
    janitor_actor::pointer self, const janitor_config& config,
    const std::shared_ptr<ports::registry_store>& store,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters,
    const std::shared_ptr<ports::command_store>& commands) {
  self->delayed_send(self, config.interval, sweep_atom::value);
  return {
      [self, config, store, counters, commands](sweep_atom) {
        ports::store_failure error;
        const auto report = store->janitor_pass(config.mode, config.batch, error);
        counters->janitor_passes.fetch_add(1);
        if (!report) {
          spdlog::warn("janitor: pass failed: {}", error.text());
        } else {
          counters->janitor_evicted.fetch_add(report->evicted);
          for (const std::string& dead : report->dead)
            spdlog::info("janitor: instance {} is dead (no heartbeat)", dead);
          if (report->evicted > 0)
            spdlog::info("janitor: evicted {} registry entries of {} dead instance(s)",
                         report->evicted, report->dead.size());
        }
        if (commands) adopt_command_streams(*commands, *counters);
        self->delayed_send(self, config.interval, sweep_atom::value);
      },
  };
}

}  // namespace tgw::actors::registry
