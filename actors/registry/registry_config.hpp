#pragma once

#include <chrono>
#include <cstddef>

#include "actors/ports/registry_store.hpp"

namespace tgw::actors::registry {

/// Settings of the registry actor (registry_actor.hpp).
struct registry_config {
  std::chrono::milliseconds heartbeat_interval{30'000};
  std::chrono::seconds heartbeat_ttl{90};
  /// While a repair is owed (Redis was down), retry this often.
  std::chrono::milliseconds repair_interval{1000};
  /// A failure that goes on is logged again at most this often (domain::failure_log).
  std::chrono::milliseconds failure_log_interval{30'000};
};

/// Settings of the janitor actor (registry_actor.hpp).
struct janitor_config {
  std::chrono::milliseconds interval{60'000};  ///< JANITOR_INTERVAL_MS
  ports::janitor_mode mode = ports::janitor_mode::reverse_index;
  std::size_t batch = 1000;
};

}  // namespace tgw::actors::registry
