#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "infra/api/api_store.hpp"

namespace tgw::infra::api {

/// Where the API's blocking work runs: a few threads, each with a store (and so a Redis
/// connection) of its own, taking jobs from one bounded queue. An io thread hands a
/// job over and returns; the job answers through its responder when it is done.
class work_pool {
 public:
  using job = std::function<void(api_store&)>;
  using store_factory = std::function<std::unique_ptr<api_store>()>;

  /// `threads` 0: no thread; every job runs at once on the caller's thread, with one
  /// store (tests and the fuzzer, whose stores never block).
  work_pool(std::size_t threads, std::size_t max_queued, const store_factory& make);
  /// Finishes the jobs taken, drops those still queued (their responders answer 500
  /// as they go), joins the threads.
  ~work_pool();
  work_pool(const work_pool&) = delete;
  work_pool& operator=(const work_pool&) = delete;

  /// Queues `j`; false (nothing queued) when max_queued jobs wait already.
  bool submit(job j);
  [[nodiscard]] std::size_t queued() const;

 private:
  void run(api_store& store);

  const std::size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<job> jobs_;
  bool stop_ = false;
  std::vector<std::unique_ptr<api_store>> stores_;
  std::vector<std::thread> threads_;
};

}  // namespace tgw::infra::api
