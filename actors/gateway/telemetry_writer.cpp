#include "actors/gateway/telemetry_writer.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_messages.hpp"

namespace tgw::actors::gateway {
namespace {

using infra::telemetry::write_op;
using infra::telemetry::write_outcome;

struct writer_state {
  std::vector<write_op> ops;
  std::vector<caf::typed_response_promise<write_outcome>> promises;
  bool flush_queued = false;
  bool down = false;
  std::string down_reason;
  std::chrono::steady_clock::time_point retry_at{};
  std::chrono::milliseconds backoff{100};
};

}  // namespace

caf::behavior telemetry_writer(caf::event_based_actor* self, const writer_config& config,
                               const std::shared_ptr<infra::telemetry::telemetry_store>& store,
                               int shard,
                               const std::shared_ptr<infra::metrics::gateway_counters>& counters) {
  auto state = std::make_shared<writer_state>();
  auto flush = [config, store, state, shard, counters] {
    state->flush_queued = false;
    if (state->ops.empty()) return;
    std::vector<write_outcome> outcomes;
    const auto now = std::chrono::steady_clock::now();
    if (state->down && now < state->retry_at) {
      // Fail fast while backing off: the device keeps its records and resends.
      outcomes.assign(state->ops.size(), write_outcome{false, false, 0, state->down_reason});
    } else {
      counters->writer_batch_size.observe(static_cast<double>(state->ops.size()));
      outcomes = store->write_batch(state->ops);
      const bool failed =
          !outcomes.empty() && !outcomes.front().ok && outcomes.front().error.starts_with("IO");
      if (failed) {
        counters->writer_redis_errors.fetch_add(1, std::memory_order_relaxed);
        if (!state->down)
          spdlog::error(
              "telemetry writer {}: Redis unavailable ({}); devices are not ACKed "
              "until it returns",
              shard, outcomes.front().error);
        state->down = true;
        state->down_reason = outcomes.front().error;
        state->retry_at = now + state->backoff;
        state->backoff = std::min(state->backoff * 2, config.max_backoff);
      } else if (state->down) {
        spdlog::info("telemetry writer {}: Redis reachable again", shard);
        counters->writer_reconnects.fetch_add(1, std::memory_order_relaxed);
        state->down = false;
        state->backoff = std::chrono::milliseconds{100};
      }
    }
    for (std::size_t i = 0; i < state->promises.size(); ++i)
      state->promises[i].deliver(std::move(outcomes[i]));
    state->ops.clear();
    state->promises.clear();
  };
  auto enqueue = [self, config, state, flush](write_op op) {
    state->ops.push_back(std::move(op));
    auto promise = self->make_response_promise<write_outcome>();
    state->promises.push_back(promise);
    if (state->ops.size() >= config.max_batch) {
      flush();
    } else if (!state->flush_queued) {
      state->flush_queued = true;
      self->send(self, flush_atom::value);
    }
    return promise;
  };
  return {
      [enqueue](persist_atom, infra::telemetry::packet_job& job) {
        write_op op;
        op.packet = std::move(job);
        op.is_packet = true;
        return enqueue(std::move(op));
      },
      [enqueue](event_atom, infra::telemetry::journal_event& event) {
        write_op op;
        op.event = std::move(event);
        op.is_packet = false;
        return enqueue(std::move(op));
      },
      [flush](flush_atom) { flush(); },
  };
}

}  // namespace tgw::actors::gateway
