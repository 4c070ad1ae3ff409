#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tgw::infra::process {

/// systemd's notification protocol (sd_notify(3)): datagrams to the unix socket named by
/// $NOTIFY_SOCKET. Written out here rather than linking libsystemd for one sendmsg(); it
/// does nothing when the variable is unset, so the gateway runs the same without
/// systemd. With $WATCHDOG_USEC (Type=notify and WatchdogSec=), a thread of its own sends
/// WATCHDOG=1 at half that period for as long as `alive` says the process works, so a
/// hung gateway is restarted rather than left holding its devices.
class service_notifier {
 public:
  service_notifier();
  ~service_notifier();
  service_notifier(const service_notifier&) = delete;
  service_notifier& operator=(const service_notifier&) = delete;

  /// Sends `state` ("READY=1", "STOPPING=1", "STATUS=..."); false if it could not.
  bool notify(std::string_view state) const;
  [[nodiscard]] bool enabled() const noexcept { return !socket_path_.empty(); }
  /// The watchdog period systemd asked for; zero when none.
  [[nodiscard]] std::chrono::microseconds watchdog_period() const noexcept { return watchdog_; }

  /// Starts the watchdog pings (if systemd asked for them); `alive` runs on the
  /// notifier's thread before each ping and must not block.
  void start_watchdog(std::function<bool()> alive);

 private:
  std::string socket_path_;
  std::chrono::microseconds watchdog_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tgw::infra::process
