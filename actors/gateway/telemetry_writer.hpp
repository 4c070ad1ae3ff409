#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/typed_response_promise.hpp>

#include "actors/gateway/gateway_actors.hpp"
#include "actors/gateway/writer_config.hpp"
#include "actors/ports/telemetry_store.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::gateway {

/// Who hears how one write went: a request's promise, a session that sent ingest_atom
/// (answered with persisted_atom), or no one (note_atom).
struct reply_to {
  caf::typed_response_promise<ports::write_outcome> promise;
  session_actor session;
  bool is_request = false;
};

/// What a telemetry writer keeps between messages: the batch it gathers and the writes
/// it holds to send again.
struct writer_state {
  static constexpr const char* name = "telemetry-writer";
  std::vector<ports::write_op> ops;
  std::vector<reply_to> replies;
  /// When each op of `ops` first went to the store (or arrived, for a new one).
  std::vector<std::chrono::steady_clock::time_point> first_try;
  /// Ops held to be sent again (write_outcome::retryable), with their answers owed.
  std::vector<ports::write_op> held_ops;
  std::vector<reply_to> held_replies;
  std::vector<std::chrono::steady_clock::time_point> held_first_try;
  bool resend_queued = false;
  bool settle_queued = false;
  bool flush_queued = false;
  bool lingered = false;
  bool down = false;
  std::string down_reason;
  ports::failure_kind down_failure = ports::failure_kind::none;
  ports::failure_cause down_cause;
  std::chrono::steady_clock::time_point retry_at{};
  std::chrono::milliseconds backoff{100};
};

/// One shard of the telemetry writer. It gathers every write that is in its mailbox
/// (requests, a session's ingest messages, plain events), writes them in one
/// pipelined round trip, then answers each: a request through its promise, an ingest
/// message with (persisted_atom, outcome) to its sender, in arrival order.
/// Batching costs no timer: the flush message it sends itself queues behind whatever
/// writes already arrived. With a linger, a batch smaller than linger_below first
/// waits that long (the thread sleeps; it is the writer's own) and sends the flush
/// again, so the writes that came meanwhile join it: fewer, larger round trips for a
/// little latency.
/// A write that failed but may be sent again safely (write_outcome::retryable) is held
/// and sent again every retry_delay until it succeeds or persist_retry has passed since
/// it first went out; only then is it answered. While Redis is down the writer answers
/// (or holds) at once without trying, and tries the connection again with exponential
/// backoff; `health` hears of every round trip and logs the outage. Spawn it
/// detached: the store blocks, and so does the linger.
telemetry_writer_self_actor::behavior_type telemetry_writer(
    telemetry_writer_self_actor::stateful_pointer<writer_state> self, const writer_config& config,
    const std::shared_ptr<ports::telemetry_store>& store, int shard,
    const std::shared_ptr<infra::metrics::gateway_counters>& counters);

}  // namespace tgw::actors::gateway
