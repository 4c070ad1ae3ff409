#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "infra/capture/capture_files.hpp"
#include "infra/capture/ip_endpoint.hpp"

namespace tgw::infra::metrics {
struct gateway_counters;
}

namespace tgw::infra::capture {

/// How much capture data may wait for the disk.
struct queue_limits {
  std::size_t max_bytes = std::size_t{16} << 20;
  std::size_t max_items = 65'536;
};

/// Records device connections for `tgw serve --capture-dir`. The data path only copies
/// the bytes and appends them to a bounded queue under a lock held for a push; one
/// writer thread takes the whole queue at once and does every disk write. When the
/// queue is full the data is dropped and counted (capture_dropped), so a slow disk
/// never stalls a device. Opens and closes are never dropped, so the writer's view of
/// each connection stays consistent. Every call is safe from any thread.
class capture_recorder {
 public:
  capture_recorder(rotation_policy policy, queue_limits limits,
                   std::shared_ptr<metrics::gateway_counters> counters);
  /// Writes what is queued, closes the file and joins the writer thread.
  ~capture_recorder();
  capture_recorder(const capture_recorder&) = delete;
  capture_recorder& operator=(const capture_recorder&) = delete;

  /// A new connection; returns its id for the other calls.
  std::uint64_t open(const ip_endpoint& device, const ip_endpoint& gateway);
  /// Bytes read from the device (`from_device`) or queued for it.
  void data(std::uint64_t id, bool from_device, std::span<const std::uint8_t> bytes);
  void close(std::uint64_t id, bool by_device);

 private:
  enum class kind : std::uint8_t { open, data, close };
  struct item {
    kind what = kind::data;
    bool from_device = false;
    std::uint64_t id = 0;
    std::int64_t unix_us = 0;
    ip_endpoint device;
    ip_endpoint gateway;
    std::vector<std::uint8_t> bytes;
  };

  void push(item it, bool droppable);
  void run();
  void write(std::vector<item>& batch);

  capture_files files_;
  queue_limits limits_;
  std::shared_ptr<metrics::gateway_counters> counters_;
  std::atomic<std::uint64_t> next_id_{1};
  std::mutex mutex_;
  std::vector<item> queue_;
  std::size_t queued_bytes_ = 0;
  bool stopping_ = false;
  std::condition_variable stop_;
  std::thread writer_;
};

}  // namespace tgw::infra::capture
