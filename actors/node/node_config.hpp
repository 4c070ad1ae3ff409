#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/ports/node_store.hpp"

namespace tgw::actors::node {

/// What every role of one cluster node needs to know.
struct node_config {
  std::string id;
  std::chrono::milliseconds health_interval{200};
  std::chrono::milliseconds emit_interval{500};  ///< 0: emit as fast as Redis allows.
  int emit_batch = 1;                            ///< Messages per emit call.
  std::chrono::milliseconds work_min{0};         ///< Handler time, drawn uniformly.
  std::chrono::milliseconds work_max{100};
  double error_rate = 0.05;  ///< Share of messages whose handler fails.
  std::chrono::milliseconds take_wait{1000};
  std::uint64_t seed = 0;  ///< For the handler's random draws.
};

/// Makes a fresh store (one per role: each owns its Redis connection and thread).
using store_factory = std::function<std::shared_ptr<ports::node_store>()>;

}  // namespace tgw::actors::node
