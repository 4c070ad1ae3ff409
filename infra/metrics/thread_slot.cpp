#include "infra/metrics/thread_slot.hpp"

#include <atomic>

namespace tgw::infra::metrics {

std::size_t thread_slot() noexcept {
  static std::atomic<std::size_t> next{0};
  thread_local const std::size_t slot = next.fetch_add(1, std::memory_order_relaxed) % thread_slots;
  return slot;
}

}  // namespace tgw::infra::metrics
