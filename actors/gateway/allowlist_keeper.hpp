#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "actors/domain/allowlist.hpp"
#include "actors/ports/allowlist_source.hpp"

namespace tgw::infra::metrics {
struct gateway_counters;
}
namespace tgw::actors::gateway {

class session_directory;

/// Keeps an instance's allowlist current: loads it at start, again on SIGHUP and,
/// for a Redis SET, every refresh period; after each load, the sessions of devices the
/// new list no longer admits are told to disconnect (they journal why). A load that
/// fails keeps the list in force. Loading blocks on a file or on Redis, so it runs on
/// the main thread (start, SIGHUP) or on the keeper's own refresh thread.
class allowlist_keeper {
 public:
  allowlist_keeper(std::unique_ptr<ports::allowlist_source> source,
                   std::shared_ptr<infra::metrics::gateway_counters> counters);
  ~allowlist_keeper();
  allowlist_keeper(const allowlist_keeper&) = delete;
  allowlist_keeper& operator=(const allowlist_keeper&) = delete;

  /// The first load; false with `error` set when there is no usable list.
  bool load_first(std::string& error);

  /// Sessions to tell when a reload removes devices; set once sessions exist.
  void watch_sessions(std::shared_ptr<const session_directory> directory);

  /// Loads the list again (`why` names the trigger in the log). True if it loaded.
  bool reload(std::string_view why);

  /// Reloads every `period` on a thread of its own until destroyed.
  void refresh_every(std::chrono::seconds period);

  [[nodiscard]] std::shared_ptr<const domain::allowlist> list() const { return list_; }
  [[nodiscard]] const ports::allowlist_source& source() const { return *source_; }

 private:
  std::unique_ptr<ports::allowlist_source> source_;
  std::shared_ptr<domain::allowlist> list_ = std::make_shared<domain::allowlist>();
  std::shared_ptr<infra::metrics::gateway_counters> counters_;
  std::mutex mutex_;  ///< One reload at a time; guards directory_.
  std::shared_ptr<const session_directory> directory_;
  std::mutex stop_mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread refresher_;
};

}  // namespace tgw::actors::gateway
