#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "infra/api/api_input.hpp"
#include "infra/api/api_ports.hpp"
#include "infra/api/event_cursor.hpp"
#include "infra/http/body_stream.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::api {

struct event_hub_limits {
  std::size_t max_clients = 256;
  /// A stream's bytes queued and unwritten past which its client is cut off (with a
  /// last event saying why): the HTTP server's max_stream_queue_bytes.
  std::chrono::seconds keepalive{15};
};

/// Server-Sent Events for every client of one process: one thread reads every source
/// (XREAD BLOCK on a single node, a pipelined poll of the shards on a cluster), turns
/// each entry into its event once, and hands the bytes to every client whose filter
/// takes it (clients with the same filter share one buffer). A client that resumes
/// with Last-Event-ID is first served from the streams by a second thread, page by
/// page, until it has caught up with the live position, and then joins the live ones.
///
/// A client that reads slower than events come fills its stream's budget; it is then
/// cut off with a last event `error` (code slow_client) naming the id to resume from,
/// never buffered without bound. Nothing is read while no client follows.
class event_hub final : public event_streams {
 public:
  event_hub(redis::connection::options where, event_hub_limits limits);
  ~event_hub() override;
  event_hub(const event_hub&) = delete;
  event_hub& operator=(const event_hub&) = delete;

  /// Whether a client would be taken now (sources known, below max_clients); a 503 in
  /// `error` when not. A check only: subscribe() decides.
  [[nodiscard]] bool admits(api_error& error) const override;
  /// A client that comes before the sources are known (the API has just started, or
  /// Redis came back) waits for them instead of being refused: an EventSource takes a
  /// refusal as final and stops reconnecting. At most max_clients wait.
  void when_ready(std::chrono::milliseconds within, std::function<void(bool)> then) override;
  /// Follows `filter` into `out`, from `from` when given (a parsed Last-Event-ID) or
  /// from now. False with a 503 in `error` when max_clients follow already, or the
  /// sources are not known yet (Redis unreachable); `from` of the wrong size is a 400.
  bool subscribe(std::shared_ptr<http::body_stream> out, event_filter filter,
                 std::optional<event_cursor> from, api_error& error) override;

  /// Sources per cursor, once known (0 before).
  [[nodiscard]] std::size_t sources() const override;
  [[nodiscard]] bool reading() const override;
  [[nodiscard]] std::size_t clients() const override;
  [[nodiscard]] std::uint64_t events_sent() const override {
    return sent_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t clients_cut() const override {
    return cut_.load(std::memory_order_relaxed);
  }

 private:
  struct client;
  struct waiter {
    std::chrono::steady_clock::time_point until;
    std::function<void(bool)> then;
  };
  /// Answers the waiters: every one when `known`, else those whose time is up.
  void answer_waiters(bool known);
  /// admits(), with mutex_ held.
  bool admits_locked(api_error& error) const;
  void run_live();
  void run_catch_up();
  bool know_sources(redis::connection& conn);
  /// Moves every source's position to its newest entry (nothing to send: no client).
  bool refresh_positions(redis::connection& conn);
  /// Reads once, hands out what came; false on a Redis failure.
  bool read_round(redis::connection& conn);
  void deliver(const std::vector<std::shared_ptr<client>>& to, std::size_t source,
               const std::string& id,
               const std::vector<std::pair<std::string, std::string>>& fields,
               const event_cursor& after, std::vector<std::string>* batches);
  void keepalive();

  const redis::connection::options where_;
  const event_hub_limits limits_;
  mutable std::mutex mutex_;
  std::condition_variable catch_up_wake_;
  redis::key_shards shards_;
  std::vector<std::string> keys_;  ///< One per source.
  event_cursor live_;              ///< Where the live clients are.
  bool known_ = false;
  std::vector<std::shared_ptr<client>> live_clients_;
  std::vector<std::shared_ptr<client>> catching_up_;
  std::vector<waiter> waiters_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> cut_{0};
  std::chrono::steady_clock::time_point last_keepalive_{};
  std::thread live_thread_;
  std::thread catch_up_thread_;
};

}  // namespace tgw::infra::api
