#include "infra/api/work_pool.hpp"

#include <pthread.h>

namespace tgw::infra::api {

work_pool::work_pool(std::size_t threads, std::size_t max_queued, const store_factory& make)
    : max_queued_(max_queued) {
  for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) stores_.push_back(make());
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this, store = stores_[i].get()] {
      ::pthread_setname_np(::pthread_self(), "tgw.api.work");
      run(*store);
    });
}

work_pool::~work_pool() {
  std::deque<job> dropped;
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
    dropped.swap(jobs_);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

bool work_pool::submit(job j) {
  if (threads_.empty()) {
    j(*stores_.front());
    return true;
  }
  {
    const std::lock_guard lock(mutex_);
    if (stop_ || jobs_.size() >= max_queued_) return false;
    jobs_.push_back(std::move(j));
  }
  wake_.notify_one();
  return true;
}

std::size_t work_pool::queued() const {
  const std::lock_guard lock(mutex_);
  return jobs_.size();
}

void work_pool::run(api_store& store) {
  for (;;) {
    job j;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      j = std::move(jobs_.front());
      jobs_.pop_front();
    }
    j(store);
  }
}

}  // namespace tgw::infra::api
