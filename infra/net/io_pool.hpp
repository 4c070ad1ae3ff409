#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <pthread.h>

#include "infra/net/asio.hpp"

namespace tgw::infra::net {

/// A few io_contexts, each run by one thread of its own. Whatever lives on one of them
/// is touched by that thread alone, so a connection needs no strand: its handlers, its
/// timer and the posts to it are serialized by construction, and the io_context takes
/// the single-threaded fast paths (concurrency hint 1).
class io_pool {
 public:
  /// `name` names the threads (at most 15 characters): thread_name by default.
  explicit io_pool(std::size_t threads, const char* name = thread_name) : name_(name) {
    for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      guards_.emplace_back(asio::make_work_guard(*contexts_.back()));
    }
  }
  io_pool(const io_pool&) = delete;
  io_pool& operator=(const io_pool&) = delete;
  ~io_pool() {
    stop();
    join();
  }

  /// The first context: listeners and other single objects live here.
  [[nodiscard]] asio::io_context& front() noexcept { return *contexts_.front(); }
  /// The next context in turn, for spreading connections. Thread-safe.
  [[nodiscard]] asio::io_context& next() noexcept { return at(next_index()); }
  /// The index of the next context in turn, for what keeps something per context.
  [[nodiscard]] std::size_t next_index() noexcept {
    return next_.fetch_add(1, std::memory_order_relaxed) % contexts_.size();
  }
  [[nodiscard]] asio::io_context& at(std::size_t index) noexcept { return *contexts_[index]; }
  [[nodiscard]] std::size_t size() const noexcept { return contexts_.size(); }

  /// What the threads are called (`top -H`, `ps -L`, /proc/PID/task/*/comm), so an
  /// operator can tell the sockets' CPU from the actors' (CAF's threads are
  /// `caf.multiplexer` and `caf.actor`). At most 15 characters.
  static constexpr const char* thread_name = "tgw.io";

  /// Starts one thread per context.
  void start() {
    for (auto& c : contexts_)
      threads_.emplace_back([io = c.get(), name = name_] {
        ::pthread_setname_np(::pthread_self(), name);
        io->run();
      });
  }
  /// Stops every context: their run() returns as soon as the current handler ends.
  void stop() {
    guards_.clear();
    for (auto& c : contexts_) c->stop();
  }
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

 private:
  using guard = asio::executor_work_guard<asio::io_context::executor_type>;
  const char* name_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<guard> guards_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> next_{0};
};

}  // namespace tgw::infra::net
