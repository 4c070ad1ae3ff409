#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "actors/domain/udp_backlog.hpp"

namespace tgw::actors::gateway {

/// Settings of the UDP actor (udp_ingest.hpp; `tgw serve --udp-*`).
struct udp_config {
  /// Silence after which a UDP device is journaled as disconnected.
  std::chrono::milliseconds idle_timeout{30 * 60 * 1000};
  /// Devices present at once; a new one past it is refused.
  std::size_t max_devices = 100'000;
  /// New devices (IMEIs the store does not know) over every UDP source, per hour and
  /// after a quiet spell: UDP sources are spoofable, so this budget is the instance's,
  /// not a source's. 0: no limit.
  double new_devices_per_hour = 600;
  double new_devices_burst = 200;
  /// The io thread's count of datagrams handed on; each one taken up is told to it.
  std::shared_ptr<domain::udp_backlog> backlog;
};

}  // namespace tgw::actors::gateway
