#include "infra/capture/capture_recorder.hpp"

#include <chrono>

namespace tgw::infra::capture {
namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

capture_recorder::capture_recorder(rotation_policy policy, queue_limits limits,
                                   recorder_counters counters)
    : files_(std::move(policy)), limits_(limits), counters_(std::move(counters)) {
  // Reserved once, so a push under the lock never reallocates.
  queue_.reserve(limits_.max_items);
  writer_ = std::thread([this] { run(); });
}

capture_recorder::~capture_recorder() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_one();
  writer_.join();
}

std::uint64_t capture_recorder::open(const net::ip_endpoint& device,
                                     const net::ip_endpoint& gateway) {
  item it;
  it.what = kind::open;
  it.id = next_id_.fetch_add(1, std::memory_order_relaxed);
  it.unix_us = now_us();
  it.device = device;
  it.gateway = gateway;
  const std::uint64_t id = it.id;
  push(std::move(it), false);
  return id;
}

void capture_recorder::data(std::uint64_t id, bool from_device,
                            std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  item it;
  it.id = id;
  it.from_device = from_device;
  it.unix_us = now_us();
  // The copy is made before taking the lock, which then covers only the push.
  it.bytes.assign(bytes.begin(), bytes.end());
  push(std::move(it), true);
}

void capture_recorder::close(std::uint64_t id, bool by_device) {
  item it;
  it.what = kind::close;
  it.id = id;
  it.from_device = by_device;
  it.unix_us = now_us();
  push(std::move(it), false);
}

void capture_recorder::push(item it, bool droppable) {
  const std::size_t size = it.bytes.size();
  {
    std::lock_guard lock(mutex_);
    const bool full =
        queue_.size() >= limits_.max_items || queued_bytes_ + size > limits_.max_bytes;
    if (!(droppable && full) && !stopping_) {
      queue_.push_back(std::move(it));
      queued_bytes_ += size;
      return;
    }
  }
  if (counters_.dropped) counters_.dropped->fetch_add(size, std::memory_order_relaxed);
}

void capture_recorder::run() {
  std::vector<item> batch;
  // Both vectors keep at least this capacity through swaps and clears.
  batch.reserve(limits_.max_items);
  for (;;) {
    bool last = false;
    {
      std::unique_lock lock(mutex_);
      // Producers never notify (that would cost them a futex call); the writer
      // polls, which bounds how stale a capture file is to about this period.
      stop_.wait_for(lock, std::chrono::milliseconds{50}, [this] { return stopping_; });
      batch.swap(queue_);
      queued_bytes_ = 0;
      last = stopping_;
    }
    write(batch);
    batch.clear();
    if (last) break;
  }
}

void capture_recorder::write(std::vector<item>& batch) {
  if (batch.empty()) return;
  const std::uint64_t written_before = files_.payload_written();
  const std::uint64_t lost_before = files_.payload_lost();
  for (item& it : batch) {
    switch (it.what) {
      case kind::open:
        files_.open_connection(it.id, it.unix_us, it.device, it.gateway);
        break;
      case kind::data:
        files_.data(it.id, it.unix_us, it.from_device, it.bytes);
        break;
      case kind::close:
        files_.close_connection(it.id, it.unix_us, it.from_device);
        break;
    }
  }
  files_.flush();
  if (counters_.bytes_written)
    counters_.bytes_written->fetch_add(files_.payload_written() - written_before,
                                       std::memory_order_relaxed);
  if (counters_.dropped)
    counters_.dropped->fetch_add(files_.payload_lost() - lost_before, std::memory_order_relaxed);
}

}  // namespace tgw::infra::capture
