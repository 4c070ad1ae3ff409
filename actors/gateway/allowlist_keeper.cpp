#include "actors/gateway/allowlist_keeper.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_atoms.hpp"
#include "actors/gateway/session_directory.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::gateway {

allowlist_keeper::allowlist_keeper(std::unique_ptr<ports::allowlist_source> source,
                                   std::shared_ptr<infra::metrics::gateway_counters> counters)
    : source_(std::move(source)), counters_(std::move(counters)) {}

allowlist_keeper::~allowlist_keeper() {
  {
    const std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

bool allowlist_keeper::load_first(std::string& error) {
  ports::store_failure failure;
  auto imeis = source_->load(failure);
  if (!imeis) {
    error = failure.text();
    return false;
  }
  counters_->allowlist_size.store(static_cast<std::int64_t>(imeis->size()));
  spdlog::info("allowlist: {}, {} IMEIs", source_->describe(), imeis->size());
  list_->replace(std::move(*imeis));
  return true;
}

void allowlist_keeper::watch_sessions(std::shared_ptr<const session_directory> directory) {
  const std::lock_guard lock(mutex_);
  directory_ = std::move(directory);
}

bool allowlist_keeper::reload(std::string_view why) {
  const std::lock_guard lock(mutex_);
  ports::store_failure failure;
  auto imeis = source_->load(failure);
  if (!imeis) {
    counters_->allowlist_reload_failures.fetch_add(1);
    spdlog::error("{}: {}; keeping the {} IMEIs in force", why, failure.text(), list_->size());
    return false;
  }
  const auto before = list_->current();
  std::size_t added = 0;
  std::size_t removed = 0;
  for (const auto& imei : *imeis)
    if (!before || !before->contains(imei)) ++added;
  if (before)
    for (const auto& imei : *before)
      if (!imeis->contains(imei)) ++removed;
  const std::size_t count = imeis->size();
  list_->replace(std::move(*imeis));
  counters_->allowlist_size.store(static_cast<std::int64_t>(count));
  // A periodic refresh that found nothing new says nothing; a signal always answers.
  if (added > 0 || removed > 0 || why == "SIGHUP")
    spdlog::info("{}: allowlist {} reloaded, {} IMEIs ({} added, {} removed)", why,
                 source_->describe(), count, added, removed);
  if (removed == 0 || !directory_) return true;
  std::size_t told = 0;
  for (const auto& [imei, session] : directory_->snapshot())
    if (!list_->admits(imei)) {
      caf::anon_send(session, revoke_atom::value);
      ++told;
    }
  if (told > 0) spdlog::info("{}: {} connected device(s) no longer allowed", why, told);
  return true;
}

void allowlist_keeper::refresh_every(std::chrono::seconds period) {
  refresher_ = std::thread([this, period] {
    std::unique_lock lock(stop_mutex_);
    while (!stop_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      reload("allowlist refresh");
      lock.lock();
    }
  });
}

}  // namespace tgw::actors::gateway
