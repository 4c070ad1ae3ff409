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
#include "infra/net/ip_endpoint.hpp"
#include "infra/net/traffic_recorder.hpp"

namespace tgw::infra::capture {

/// How much capture data may wait for the disk.
struct queue_limits {
  std::size_t max_bytes = std::size_t{16} << 20;
  std::size_t max_items = 65'536;
};

/// Where the recorder counts, for the instance's metrics; either may be null. The
/// gateway points them at its own counters (teltonika_capture_*).
struct recorder_counters {
  /// Payload bytes written into the capture files.
  std::shared_ptr<std::atomic<std::uint64_t>> bytes_written;
  /// Payload bytes dropped: a full queue, or a file that could not be written.
  std::shared_ptr<std::atomic<std::uint64_t>> dropped;
};

/// Records device connections for `tgw serve --capture-dir`. The data path only copies
/// the bytes and appends them to a bounded queue under a lock held for a push; one
/// writer thread takes the whole queue at once and does every disk write. When the
/// queue is full the data is dropped and counted (capture_dropped), so a slow disk
/// never stalls a device. Opens and closes are never dropped, so the writer's view of
/// each connection stays consistent. Every call is safe from any thread.
class capture_recorder final : public net::traffic_recorder {
 public:
  capture_recorder(rotation_policy policy, queue_limits limits, recorder_counters counters = {});
  /// Writes what is queued, closes the file and joins the writer thread.
  ~capture_recorder() override;
  capture_recorder(const capture_recorder&) = delete;
  capture_recorder& operator=(const capture_recorder&) = delete;

  /// A new connection; returns its id for the other calls.
  std::uint64_t open(const net::ip_endpoint& device, const net::ip_endpoint& gateway) override;
  /// Bytes read from the device (`from_device`) or queued for it.
  void data(std::uint64_t id, bool from_device, std::span<const std::uint8_t> bytes) override;
  void close(std::uint64_t id, bool by_device) override;

 private:
  enum class kind : std::uint8_t { open, data, close };
  struct item {
    kind what = kind::data;
    bool from_device = false;
    std::uint64_t id = 0;
    std::int64_t unix_us = 0;
    net::ip_endpoint device;
    net::ip_endpoint gateway;
    std::vector<std::uint8_t> bytes;
  };

  void push(item it, bool droppable);
  void run();
  void write(std::vector<item>& batch);

  capture_files files_;
  queue_limits limits_;
  recorder_counters counters_;
  std::atomic<std::uint64_t> next_id_{1};
  std::mutex mutex_;
  std::vector<item> queue_;
  std::size_t queued_bytes_ = 0;
  bool stopping_ = false;
  std::condition_variable stop_;
  std::thread writer_;
};

}  // namespace tgw::infra::capture
