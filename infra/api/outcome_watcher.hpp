#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "infra/api/api_ports.hpp"
#include "infra/commands/command_publisher.hpp"
#include "infra/redis/connection.hpp"

namespace tgw::infra::api {

/// Waits for command outcomes on behalf of many requests at once (POST ...?wait=N): one
/// thread with one connection follows the responses stream(s) and hands each response
/// to the request waiting for its command, so that a thousand waits cost one blocking
/// read, not a thousand threads.
///
/// A wait is registered before its command is published: a response is added after
/// its publish, so after every entry the thread had read when the wait began, and it
/// cannot be missed.
class outcome_watcher final : public command_waits {
 public:
  // on_outcome is called on the watcher's thread.

  /// `max_waits` waits at once at most; the thread starts at once and follows from the
  /// newest response on.
  outcome_watcher(redis::connection::options where, std::size_t max_waits);
  ~outcome_watcher() override;
  outcome_watcher(const outcome_watcher&) = delete;
  outcome_watcher& operator=(const outcome_watcher&) = delete;

  /// Waits for `command_id` until `deadline`. False (nothing registered) when
  /// `max_waits` are waiting already, or the watcher does not follow the responses
  /// now (Redis fails): a wait begun then could miss its outcome.
  bool expect(const std::string& command_id, clock::time_point deadline, on_outcome done) override;
  /// Moves a wait from one command id to another (the request turned out a repeat of
  /// an earlier one). False when the wait has ended meanwhile.
  bool rekey(const std::string& from, const std::string& to) override;
  /// Ends a wait without an outcome; false when it has ended already (its callback ran
  /// or is running).
  bool cancel(const std::string& command_id) override;

  [[nodiscard]] std::size_t waiting() const override;
  [[nodiscard]] std::uint64_t outcomes_delivered() const override {
    return delivered_.load(std::memory_order_relaxed);
  }
  /// Whether it reads the responses now (false while Redis fails).
  [[nodiscard]] bool following() const override {
    return following_.load(std::memory_order_relaxed);
  }

 private:
  struct waiter {
    clock::time_point deadline;
    on_outcome done;
    std::string command;  ///< The command whose outcome it awaits (its own id, or rekeyed).
  };
  void run();
  void expire(clock::time_point now);
  void deliver(const commands::command_response& r);

  const redis::connection::options where_;
  const std::size_t max_waits_;
  mutable std::mutex mutex_;
  /// By the id a wait was registered under: the request's own command id, which stays
  /// its name when it is rekeyed to the command an Idempotency-Key found.
  std::map<std::string, waiter> waiting_;
  /// Command id -> the waits on its outcome: several requests with one Idempotency-Key
  /// await the same command.
  std::multimap<std::string, std::string> by_command_;
  /// Removes `it` from both maps; what it held.
  waiter take(std::map<std::string, waiter>::iterator it);
  std::atomic<bool> stop_{false};
  std::atomic<bool> following_{false};
  std::atomic<std::uint64_t> delivered_{0};
  std::thread thread_;
};

}  // namespace tgw::infra::api
