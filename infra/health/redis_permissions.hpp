#pragma once

#include <string>
#include <vector>

#include "infra/redis/connection.hpp"

namespace tgw::infra::health {

/// What a gateway instance will ask of Redis, for the start-up check of its ACL.
struct gateway_usage {
  std::string instance;
  std::string prefix;  ///< Key shard 0's hash tag on a cluster; empty on one server.
  int ack_replicas = 0;
  bool retention_trims = false;  ///< --telemetry-retention groups
  bool allowlist_redis = false;
  bool janitor_scans = false;  ///< --janitor-mode scan
  bool selects_db = false;
  bool cluster = false;
  bool sentinel = false;
};

/// Every command the instance sends, as it sends it (with keys of each family it
/// touches), the commands its Redis Functions call included: an ACL checks those at
/// the call inside the Function, and names neither the command nor the key then.
[[nodiscard]] std::vector<std::vector<std::string>> gateway_commands(const gateway_usage& usage);

/// The outcome of ACL DRYRUN over a list of commands.
struct permission_check {
  bool checked = false;  ///< False: this user may not run ACL DRYRUN; nothing was checked.
  std::string refused;   ///< The first command refused, Redis' reason and the fix; empty: all pass.
  std::string why_unchecked;
};

/// Runs ACL DRYRUN for `user` (the URL's, "default" without one) over `commands`.
[[nodiscard]] permission_check check_permissions(
    redis::connection& conn, const std::string& user,
    const std::vector<std::vector<std::string>>& commands);

}  // namespace tgw::infra::health
