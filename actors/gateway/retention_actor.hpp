#pragma once

#include <chrono>
#include <memory>

#include "actors/gateway/gateway_actors.hpp"
#include "actors/gateway/retention_status.hpp"
#include "actors/ports/retention_store.hpp"

namespace tgw::actors::gateway {

/// Every interval, reads each telemetry stream's consumer groups and, with trimming on,
/// trims the stream below what every group acknowledged. Every instance runs one; the
/// trims agree, since each removes only what all groups are done with. Detached: it
/// blocks on its own store (its own connection).
retention_actor::behavior_type retention(retention_actor::pointer self,
                                         const retention_config& config,
                                         const std::shared_ptr<ports::retention_store>& store,
                                         const std::shared_ptr<retention_status>& status);

}  // namespace tgw::actors::gateway
