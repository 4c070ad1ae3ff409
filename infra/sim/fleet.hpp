#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "infra/net/asio.hpp"
#include "infra/net/asio_ssl.hpp"
#include "infra/sim/fleet_options.hpp"
#include "infra/sim/fleet_stats.hpp"
#include "infra/sim/record_generator.hpp"
#include "infra/sim/simulated_device.hpp"

namespace tgw::infra::sim {

/// One line of live progress: rates over the interval since the previous sample.
struct fleet_progress {
  double elapsed_s = 0.0;
  std::int64_t connected = 0;
  std::uint64_t devices = 0;
  double packets_per_s = 0.0;
  double records_per_s = 0.0;
  double ack_p50_ms = 0.0;  ///< Of the ACKs in the interval.
  double ack_p99_ms = 0.0;
  std::uint64_t errors = 0;  ///< Since the start (fleet_totals::errors()).
  latency_snapshot latency;  ///< The interval's ACK latencies.
};

/// "12s connected 9876/10000 | 9800 packets/s 98000 records/s | ACK p50 ... | errors 0".
[[nodiscard]] std::string format_progress(const fleet_progress& progress);

/// The same as one JSON line, with the interval's latency histogram as
/// "ack_latency_us": {bucket's highest value in us: count}: merging the lines of a
/// window and taking the percentile of the sum gives the window's exact percentile
/// (to the bucket), which per-second percentiles cannot.
[[nodiscard]] std::string format_progress_json(const fleet_progress& progress);

/// Raises the soft RLIMIT_NOFILE to the hard limit if `devices` sockets (plus a margin)
/// need it. An empty string when there are enough files, else what to tell the user.
[[nodiscard]] std::string ensure_file_limit(std::size_t devices);

/// A fleet of simulated devices on a few io threads (device i on thread i mod threads),
/// each running its own io_context: device i connects at
/// ramp_up * i / count, the fleet stops after `duration` (if set), when every device
/// is done (rejected, out of packets, or given up), or on stop().
class fleet {
 public:
  /// Throws std::invalid_argument when validate(options) finds a fault.
  explicit fleet(fleet_options options);
  fleet(const fleet&) = delete;
  fleet& operator=(const fleet&) = delete;
  /// Stops the devices and joins the io threads.
  ~fleet();

  /// Resolves the target, creates the devices and starts the io threads. Throws
  /// std::runtime_error (boost::system::system_error) when the target does not resolve,
  /// std::invalid_argument when --source-spread is set for a target off IPv4 loopback.
  void start();
  /// Asks every device to close. Thread-safe; the fleet is finished soon after.
  void stop();
  /// Waits up to `timeout` for the fleet to finish; true when it has.
  [[nodiscard]] bool wait_for(std::chrono::milliseconds timeout);
  /// Waits until the fleet has finished and joins the io threads.
  void wait();

  /// The report so far (final once wait() returned).
  [[nodiscard]] fleet_report report() const;
  /// Rates since the previous call; call it from one thread.
  [[nodiscard]] fleet_progress sample_progress();

  [[nodiscard]] const fleet_options& options() const noexcept { return options_; }
  [[nodiscard]] const fleet_counters& counters() const noexcept { return counters_; }

  /// start(), wait(), report(): a whole run, for tests and scripts.
  [[nodiscard]] static fleet_report run(const fleet_options& options);

 private:
  void device_finished();
  void arm_duration();
  void warn_about_packet_size();

  // Declared first so they are destroyed last: devices hold their executors. One
  // io_context per io thread, each run by that thread alone: a device never needs a
  // strand, and a post or a timer takes no lock another thread contends for.
  std::vector<std::unique_ptr<net::asio::io_context>> ios_;
  net::asio::strand<net::asio::io_context::executor_type> strand_;
  net::asio::steady_timer duration_timer_;
  fleet_options options_;
  record_generator generator_;
  fleet_counters counters_;
  std::unique_ptr<acked_log> acked_;
  std::unique_ptr<net::asio::ssl::context> tls_;
  std::unique_ptr<device_environment> env_;
  std::vector<std::unique_ptr<simulated_device>> devices_;
  std::vector<std::thread> threads_;

  std::atomic<std::size_t> remaining_{0};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::condition_variable finished_cv_;
  bool finished_ = false;  // Guarded by mutex_.
  std::chrono::steady_clock::time_point started_at_{};
  std::chrono::steady_clock::time_point finished_at_{};  // Guarded by mutex_.

  std::chrono::steady_clock::time_point last_sample_at_{};
  fleet_totals last_sample_{};
};

}  // namespace tgw::infra::sim
