#include "actors/gateway/telemetry_writer.hpp"

#include <algorithm>
#include <string_view>
#include <thread>
#include <unordered_set>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_atoms.hpp"
#include "actors/gateway/session_actor_base.hpp"

namespace tgw::actors::gateway {
namespace {

using ports::write_op;
using ports::write_outcome;

// Tells the instance's persist health how a round trip went: the success path is a
// scan of the outcomes; failures are grouped by their error, with the packets each
// left un-ACKed, for the log and /readyz (the health object logs, rate-limited). A
// packet held to be sent again (`held`) failed this round trip but is not un-ACKed
// yet: it counts when it is answered as failed, as teltonika_persist_failures_total
// counts it, so that the log's figures and the metric's agree.
// Returns when to tell the health object that no failure followed a success (zero:
// nothing pending), so the recovery is logged even if no more traffic comes.
std::chrono::steady_clock::duration report_health(domain::persist_health& health, int shard,
                                                  const std::vector<write_op>& ops,
                                                  const std::vector<write_outcome>& outcomes,
                                                  const std::vector<bool>& held) {
  const auto writer = static_cast<std::size_t>(shard);
  const auto now = std::chrono::steady_clock::now();
  bool any_ok = false;
  bool any_failed = false;
  for (const write_outcome& o : outcomes) (o.ok ? any_ok : any_failed) = true;
  if (!any_failed) return health.succeeded(writer, now);
  std::vector<domain::persist_health::failure> failures;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const write_outcome& o = outcomes[i];
    if (o.ok) continue;
    auto same = std::find_if(failures.begin(), failures.end(), [&](const auto& f) {
      return f.cause.label == o.cause.label && f.cause.detail == o.cause.detail;
    });
    if (same == failures.end()) same = failures.insert(failures.end(), {o.cause, 0});
    if (ops[i].is_packet && !held[i]) ++same->packets;
  }
  health.failed(writer, failures, any_ok, now);
  return std::chrono::steady_clock::duration::zero();
}

const std::string& imei_of(const write_op& op) {
  return op.is_packet ? op.packet.imei : op.event.imei;
}

// Moves the packets of devices that have a held packet behind it, in order (their
// sessions match answers to packets in order; events are answered by request).
void hold_behind_held(writer_state& state) {
  std::unordered_set<std::string> held;  // copies: held_ops grows below
  for (const write_op& op : state.held_ops) held.insert(imei_of(op));
  std::size_t kept = 0;
  for (std::size_t i = 0; i < state.ops.size(); ++i) {
    if (state.ops[i].is_packet && held.contains(imei_of(state.ops[i]))) {
      state.held_ops.push_back(std::move(state.ops[i]));
      state.held_replies.push_back(std::move(state.replies[i]));
      state.held_first_try.push_back(state.first_try[i]);
      continue;
    }
    if (kept != i) {
      state.ops[kept] = std::move(state.ops[i]);
      state.replies[kept] = std::move(state.replies[i]);
      state.first_try[kept] = state.first_try[i];
    }
    ++kept;
  }
  state.ops.resize(kept);
  state.replies.resize(kept);
  state.first_try.resize(kept);
}

}  // namespace

telemetry_writer_self_actor::behavior_type telemetry_writer(
    telemetry_writer_self_actor::stateful_pointer<writer_state> self, const writer_config& config,
    const std::shared_ptr<ports::telemetry_store>& store, int shard,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters) {
  // The actor's own: its handlers run only while it does.
  writer_state* state = &self->state;
  auto schedule_resend = [self, config, state](std::chrono::steady_clock::time_point now) {
    if (state->held_ops.empty() || state->resend_queued) return;
    state->resend_queued = true;
    // Not before the backoff of a writer that found Redis down ends.
    const auto wait = std::max(
        config.retry_delay,
        state->down ? std::chrono::duration_cast<std::chrono::milliseconds>(state->retry_at - now)
                    : std::chrono::milliseconds{0});
    self->delayed_send(self, wait, retry_atom::value);
  };
  auto flush = [self, config, store, state, shard, counters, schedule_resend] {
    leave_caf_logger();  // the writer's own thread resumes it for every batch
    state->flush_queued = false;
    if (state->ops.empty()) return;
    if (!state->lingered && config.linger.count() > 0 &&
        state->ops.size() < std::min(config.linger_below, config.max_batch) && !state->down) {
      // The writer has a thread of its own (it blocks on Redis anyway): sleeping here
      // lets the writes that arrive meanwhile queue behind the flush sent below, and
      // join this batch.
      std::this_thread::sleep_for(config.linger);
      state->lingered = true;
      state->flush_queued = true;
      self->send(self, flush_atom::value);
      return;
    }
    state->lingered = false;
    const auto now = std::chrono::steady_clock::now();
    // A device whose write is held waits behind it: its sessions match answers to
    // packets in order, and a packet stored ahead of a held one would be stored again
    // when the held one is resent (the store recognises only the latest fingerprint).
    if (!state->held_ops.empty()) hold_behind_held(*state);
    if (state->ops.empty()) {
      schedule_resend(now);
      return;
    }
    std::vector<write_outcome> outcomes;
    if (state->down && now < state->retry_at) {
      // Fail fast while backing off: the device keeps its records and resends.
      write_outcome refused{false, false, 0, state->down_reason};
      refused.failure = state->down_failure;
      refused.cause = state->down_cause;
      refused.unreachable = true;
      refused.retryable = true;  // nothing was sent
      outcomes.assign(state->ops.size(), refused);
    } else {
      counters->writer_batch_size.observe(static_cast<double>(state->ops.size()));
      if (config.health) config.health->started(static_cast<std::size_t>(shard), now);
      outcomes = store->write_batch(state->ops);
      // Down only when the store as a whole is unreachable: on a Redis Cluster one
      // master can fail while the others take their shards' writes, and their devices
      // must go on being ACKed (the client fails the dead master's calls at once).
      const auto io_failure = [](const write_outcome& o) {
        return !o.ok && ports::is_transport(o.failure);
      };
      const bool failed =
          !outcomes.empty() && std::all_of(outcomes.begin(), outcomes.end(),
                                           [](const write_outcome& o) { return o.unreachable; });
      if (!failed && std::any_of(outcomes.begin(), outcomes.end(), io_failure))
        counters->writer_redis_errors.fetch_add(1, std::memory_order_relaxed);
      if (failed) {
        counters->writer_redis_errors.fetch_add(1, std::memory_order_relaxed);
        if (!state->down) counters->writers_down.fetch_add(1);
        state->down = true;
        state->down_reason = outcomes.front().error;
        state->down_failure = outcomes.front().failure;
        state->down_cause = outcomes.front().cause;
        state->retry_at = now + state->backoff;
        state->backoff = std::min(state->backoff * 2, config.max_backoff);
      } else if (state->down) {
        counters->writers_down.fetch_sub(1);
        counters->writer_reconnects.fetch_add(1, std::memory_order_relaxed);
        state->down = false;
        state->backoff = std::chrono::milliseconds{100};
      }
    }
    // Packets safe to send again are held, within --persist-retry-ms of their first try.
    std::vector<bool> held(outcomes.size());
    for (std::size_t i = 0; i < outcomes.size(); ++i)
      held[i] = !outcomes[i].ok && outcomes[i].retryable && state->ops[i].is_packet &&
                now - state->first_try[i] < config.persist_retry;
    if (config.health) {
      const auto settle_in = report_health(*config.health, shard, state->ops, outcomes, held);
      if (settle_in > settle_in.zero() && !state->settle_queued) {
        state->settle_queued = true;
        self->delayed_send(self, settle_in, settle_atom::value);
      }
    }
    for (std::size_t i = 0; i < state->replies.size(); ++i) {
      // Only packets are held: an ACK waits for them anyway, while an event answered at
      // once lets a device be accepted although Redis is away.
      if (held[i]) {
        state->held_ops.push_back(std::move(state->ops[i]));
        state->held_replies.push_back(std::move(state->replies[i]));
        state->held_first_try.push_back(state->first_try[i]);
        continue;
      }
      auto& to = state->replies[i];
      if (to.is_request)
        to.promise.deliver(std::move(outcomes[i]));
      else if (to.session)
        caf::anon_send(to.session, persisted_atom::value, std::move(outcomes[i]));
    }
    state->ops.clear();
    state->replies.clear();
    state->first_try.clear();
    schedule_resend(now);
  };
  // Held ops go first, ahead of what arrived since: a device's packets stay in order.
  auto resend = [state, flush] {
    state->resend_queued = false;
    if (state->held_ops.empty()) return;
    auto move_front = [](auto& to, auto& from) {
      to.insert(to.begin(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
      from.clear();
    };
    move_front(state->ops, state->held_ops);
    move_front(state->replies, state->held_replies);
    move_front(state->first_try, state->held_first_try);
    state->lingered = true;  // no linger for a resend
    flush();
  };
  auto enqueue = [self, config, state, flush](write_op op, reply_to to) {
    state->ops.push_back(std::move(op));
    state->replies.push_back(std::move(to));
    state->first_try.push_back(std::chrono::steady_clock::now());
    if (state->ops.size() >= config.max_batch) {
      flush();
    } else if (!state->flush_queued) {
      state->flush_queued = true;
      self->send(self, flush_atom::value);
    }
  };
  auto packet_op = [](ports::packet_job& job) {
    write_op op;
    op.packet = std::move(job);
    op.is_packet = true;
    return op;
  };
  auto event_op = [](ports::journal_event& event) {
    write_op op;
    op.event = std::move(event);
    op.is_packet = false;
    return op;
  };
  auto request = [self] {
    return reply_to{self->make_response_promise<write_outcome>(), {}, true};
  };
  return {
      [enqueue, packet_op, request](persist_atom, ports::packet_job& job) {
        auto to = request();
        auto promise = to.promise;
        enqueue(packet_op(job), std::move(to));
        return promise;
      },
      [enqueue, event_op, request](event_atom, ports::journal_event& event) {
        auto to = request();
        auto promise = to.promise;
        enqueue(event_op(event), std::move(to));
        return promise;
      },
      [self, enqueue, packet_op](ingest_atom, ports::packet_job& job) {
        // Only sessions send ingest_atom.
        enqueue(packet_op(job),
                reply_to{{}, caf::actor_cast<session_actor>(self->current_sender()), false});
      },
      [enqueue, event_op](note_atom, ports::journal_event& event) {
        enqueue(event_op(event), reply_to{});
      },
      [flush](flush_atom) { flush(); },
      [resend](retry_atom) { resend(); },
      [self, config, state](settle_atom) {
        // A failure and a success since it was scheduled move the end later: look again.
        const auto again = config.health->settled(std::chrono::steady_clock::now());
        if (again > again.zero())
          self->delayed_send(self, again, settle_atom::value);
        else
          state->settle_queued = false;
      },
  };
}

}  // namespace tgw::actors::gateway
