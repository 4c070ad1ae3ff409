#pragma once

#include <atomic>
#include <cstdint>

namespace tgw::infra::metrics {

/// Counters the sessions of one instance share; the metrics endpoint reads them. Plain atomics: the
/// data path only increments, and nothing here depends on CAF or prometheus-cpp.
struct gateway_counters {
  std::atomic<std::uint64_t> handshakes_accepted{0};
  std::atomic<std::uint64_t> handshakes_rejected{0};
  std::atomic<std::uint64_t> frames_avl{0};
  std::atomic<std::uint64_t> frames_rejected{0};
  std::atomic<std::uint64_t> frames_command{0};
  std::atomic<std::uint64_t> keepalives{0};
  std::atomic<std::uint64_t> records_persisted{0};
  std::atomic<std::uint64_t> packets_duplicate{0};
  std::atomic<std::uint64_t> persist_failures{0};
  std::atomic<std::uint64_t> acks_sent{0};
  std::atomic<std::int64_t> sessions_open{0};
  std::atomic<std::int64_t> persist_in_flight{0};
  std::atomic<std::uint64_t> registry_failures{0};
  std::atomic<std::uint64_t> janitor_evicted{0};
  std::atomic<std::uint64_t> janitor_passes{0};
  std::atomic<std::int64_t> registry_held{0};
};

}  // namespace tgw::infra::metrics
