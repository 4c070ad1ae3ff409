#pragma once

#include <cstddef>

namespace tgw::infra::metrics {

/// Slots a sharded counter keeps: threads beyond this many share slots, round robin.
inline constexpr std::size_t thread_slots = 16;

/// The calling thread's slot in [0, thread_slots), given at its first call and kept for
/// the thread's life. Threads started one after another get different slots, so the
/// io threads, scheduler workers and writers of one instance each count on their own
/// cache line.
[[nodiscard]] std::size_t thread_slot() noexcept;

}  // namespace tgw::infra::metrics
