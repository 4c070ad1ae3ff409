#pragma once

#include <string>

#include "infra/health/redis_permissions.hpp"
#include "infra/telemetry/redis_telemetry_store.hpp"

namespace tgw::infra::health {

/// What the start-up check found.
struct startup_verdict {
  /// 0: go on; 1: Redis cannot serve this instance (a permission missing, the canary
  /// refused).
  int exit_code = 0;
  std::string refusal;  ///< The one line that says why and names the fix.
  /// Set when the instance may start but cannot ACK yet (replicas short): it starts
  /// not ready and says so.
  std::string not_ready;
  /// Set when a check could not be made (the user may not run ACL DRYRUN).
  std::string unchecked;
};

/// Before the device port opens (after redis::wrong_url_scheme found the URL fits the
/// server): the ACL permissions of every command the instance will send (ACL DRYRUN),
/// and one canary
/// persist through the writers' own Function and path (WAIT included), on probe keys.
/// `store` has its Function library loaded already. Blocks; run it on the main thread.
[[nodiscard]] startup_verdict check_before_start(redis::connection& conn,
                                                 telemetry::redis_telemetry_store& store,
                                                 const gateway_usage& usage);

}  // namespace tgw::infra::health
