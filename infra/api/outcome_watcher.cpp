#include "infra/api/outcome_watcher.hpp"

#include <iterator>
#include <vector>

#include "infra/redis/shard_agreement.hpp"

namespace tgw::infra::api {
namespace {

// How often, at least, deadlines are checked and a stop is noticed: the read's block.
constexpr std::chrono::milliseconds block{100};
// After a Redis failure: a pause before the next attempt.
constexpr std::chrono::milliseconds retry_pause{500};

}  // namespace

outcome_watcher::outcome_watcher(redis::connection::options where, std::size_t max_waits)
    : where_(std::move(where)), max_waits_(max_waits), thread_([this] { run(); }) {}

outcome_watcher::~outcome_watcher() {
  stop_ = true;
  thread_.join();
  // Whoever still waits hears that no outcome came.
  std::map<std::string, waiter> left;
  {
    const std::lock_guard lock(mutex_);
    left.swap(waiting_);
    by_command_.clear();
  }
  for (auto& [id, w] : left) w.done(std::nullopt);
}

bool outcome_watcher::expect(const std::string& command_id, clock::time_point deadline,
                             on_outcome done) {
  const std::lock_guard lock(mutex_);
  if (waiting_.size() >= max_waits_ || !following_ || waiting_.contains(command_id)) return false;
  waiting_[command_id] = waiter{deadline, std::move(done), command_id};
  by_command_.emplace(command_id, command_id);
  return true;
}

outcome_watcher::waiter outcome_watcher::take(std::map<std::string, waiter>::iterator it) {
  const auto [first, last] = by_command_.equal_range(it->second.command);
  for (auto i = first; i != last; ++i)
    if (i->second == it->first) {
      by_command_.erase(i);
      break;
    }
  waiter w = std::move(it->second);
  waiting_.erase(it);
  return w;
}

bool outcome_watcher::rekey(const std::string& from, const std::string& to) {
  const std::lock_guard lock(mutex_);
  const auto it = waiting_.find(from);
  if (it == waiting_.end()) return false;
  waiter w = take(it);
  w.command = to;
  by_command_.emplace(to, from);
  waiting_[from] = std::move(w);
  return true;
}

bool outcome_watcher::cancel(const std::string& command_id) {
  std::optional<waiter> w;
  {
    const std::lock_guard lock(mutex_);
    const auto it = waiting_.find(command_id);
    if (it == waiting_.end()) return false;
    // Destroyed out of the lock: what it holds may answer its request as it goes.
    w = take(it);
  }
  return true;
}

std::size_t outcome_watcher::waiting() const {
  const std::lock_guard lock(mutex_);
  return waiting_.size();
}

void outcome_watcher::expire(clock::time_point now) {
  std::vector<waiter> late;
  {
    const std::lock_guard lock(mutex_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      const auto next = std::next(it);
      if (it->second.deadline <= now) late.push_back(take(it));
      it = next;
    }
  }
  for (waiter& w : late) w.done(std::nullopt);
}

void outcome_watcher::deliver(const commands::command_response& r) {
  std::vector<waiter> ready;
  {
    const std::lock_guard lock(mutex_);
    const auto [first, last] = by_command_.equal_range(r.command_id);
    std::vector<std::string> names;
    for (auto i = first; i != last; ++i) names.push_back(i->second);
    for (const std::string& name : names)
      if (const auto it = waiting_.find(name); it != waiting_.end()) ready.push_back(take(it));
  }
  for (waiter& w : ready) {
    delivered_.fetch_add(1, std::memory_order_relaxed);
    w.done(r);
  }
}

void outcome_watcher::run() {
  while (!stop_) {
    std::string error;
    std::optional<redis::key_shards> shards;
    {
      redis::connection conn(where_);
      if (conn.ensure_connected(error))
        shards = !conn.settings().where.via_cluster()
                     ? std::optional<redis::key_shards>(redis::key_shards{})
                     : redis::read_key_shards(conn, error);
    }
    if (shards) {
      // The read blocks for `block` at most, shorter than the connection's timeout.
      redis::connection::options o = where_;
      o.io_timeout = std::max(o.io_timeout, std::chrono::milliseconds{3000});
      commands::command_publisher follower(o, block, *shards);
      follower.watch(
          [this](const commands::command_response& r) {
            deliver(r);
            return !stop_.load();
          },
          error,
          [this] {
            // First called once the newest response is known: from here on nothing is
            // missed, and waits may begin.
            following_ = true;
            expire(clock::now());
            return stop_.load();
          });
      following_ = false;
    }
    if (stop_) break;
    // Redis failed (or no gateway has written to the cluster yet): waits keep their
    // deadlines meanwhile.
    const auto until = clock::now() + retry_pause;
    while (!stop_ && clock::now() < until) {
      expire(clock::now());
      std::this_thread::sleep_for(block);
    }
  }
}

}  // namespace tgw::infra::api
