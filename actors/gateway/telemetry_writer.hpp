#pragma once

#include <chrono>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/gateway/writer_config.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/telemetry/telemetry_store.hpp"

namespace tgw::actors::gateway {

/// One shard of the telemetry writer. It gathers every write that is in its mailbox
/// (requests, a session's ingest messages, plain events), writes them in one
/// pipelined round trip, then answers each: a request through its promise, an ingest
/// message with (persisted_atom, outcome) to its sender, in arrival order.
/// Batching costs no timer: the flush message it sends itself queues behind whatever
/// writes already arrived. With a linger, a batch that is not full first waits that
/// long (the thread sleeps; it is the writer's own) and sends the flush again, so the
/// writes that came meanwhile join it: fewer, larger round trips for a little latency.
/// A write that failed but may be sent again safely (write_outcome::retryable) is held
/// and sent again every retry_delay until it succeeds or persist_retry has passed since
/// it first went out; only then is it answered. While Redis is down the writer answers
/// (or holds) at once without trying, and tries the connection again with exponential
/// backoff; `health` hears of every round trip and logs the outage. Spawn it
/// detached: the store blocks, and so does the linger.
caf::behavior telemetry_writer(caf::event_based_actor* self, const writer_config& config,
                               const std::shared_ptr<infra::telemetry::telemetry_store>& store,
                               int shard,
                               const std::shared_ptr<infra::metrics::gateway_counters>& counters);

}  // namespace tgw::actors::gateway
