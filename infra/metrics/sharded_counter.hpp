#pragma once

#include <array>
#include <atomic>
#include <cstddef>

#include "infra/metrics/thread_slot.hpp"

namespace tgw::infra::metrics {

/// Assumed size of a cache line; slots on different lines are never written together.
inline constexpr std::size_t cache_line = 64;

/// N counters indexed by a small key (a codec id, an error code), sharded by thread:
/// each thread writes its own copy of the whole array, on cache lines of its own, and
/// a read sums the copies (see sharded_counter).
template <typename T, std::size_t N>
class sharded_counter_array {
 public:
  /// One counter of the array, read only.
  class const_element {
   public:
    [[nodiscard]] T load(std::memory_order = std::memory_order_relaxed) const noexcept {
      T sum{};
      for (const auto& s : array_->slots_) sum += s.values[index_].load(std::memory_order_relaxed);
      return sum;
    }

   protected:
    friend class sharded_counter_array;
    const_element(const sharded_counter_array* array, std::size_t index)
        : array_(array), index_(index) {}
    const sharded_counter_array* array_;
    std::size_t index_;
  };

  /// One counter of the array, with the interface of sharded_counter.
  class element : public const_element {
   public:
    void fetch_add(T v, std::memory_order = std::memory_order_relaxed) noexcept {
      writable_->slots_[thread_slot()].values[this->index_].fetch_add(v, std::memory_order_relaxed);
    }
    void fetch_sub(T v, std::memory_order = std::memory_order_relaxed) noexcept {
      writable_->slots_[thread_slot()].values[this->index_].fetch_sub(v, std::memory_order_relaxed);
    }

   private:
    friend class sharded_counter_array;
    element(sharded_counter_array* array, std::size_t index)
        : const_element(array, index), writable_(array) {}
    sharded_counter_array* writable_;
  };

  [[nodiscard]] element operator[](std::size_t i) noexcept { return element(this, i); }
  [[nodiscard]] const_element operator[](std::size_t i) const noexcept {
    return const_element(this, i);
  }
  [[nodiscard]] static constexpr std::size_t size() noexcept { return N; }

 private:
  struct alignas(cache_line) slot {
    std::array<std::atomic<T>, N> values{};
  };
  std::array<slot, thread_slots> slots_{};
};

/// A counter that every packet touches, from many threads. A plain atomic would be one
/// cache line that each increment takes from whichever core wrote it last; here each
/// thread adds to its own slot (thread_slot()) and a read sums the slots. Reads are
/// for the metrics endpoint and for waits at shutdown: a sum of relaxed loads, not a
/// snapshot. T may be signed: a gauge raised on one thread and lowered on another
/// leaves slots below zero, and their sum is still right.
template <typename T>
class sharded_counter {
 public:
  void fetch_add(T v, std::memory_order = std::memory_order_relaxed) noexcept {
    one_[0].fetch_add(v);
  }
  void fetch_sub(T v, std::memory_order = std::memory_order_relaxed) noexcept {
    one_[0].fetch_sub(v);
  }
  [[nodiscard]] T load(std::memory_order = std::memory_order_relaxed) const noexcept {
    return one_[0].load();
  }

 private:
  sharded_counter_array<T, 1> one_;
};

}  // namespace tgw::infra::metrics
