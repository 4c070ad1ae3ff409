#include "infra/health/startup_check.hpp"

#include <spdlog/spdlog.h>

namespace tgw::infra::health {

startup_verdict check_before_start(redis::connection& conn, telemetry::redis_telemetry_store& store,
                                   const gateway_usage& usage) {
  startup_verdict v;
  const std::string user =
      conn.settings().where.user.empty() ? "default" : conn.settings().where.user;
  const permission_check acl = check_permissions(conn, user, gateway_commands(usage));
  if (!acl.refused.empty()) {
    v.exit_code = 1;
    v.refusal = acl.refused;
    return v;
  }
  if (!acl.checked)
    v.unchecked = "the Redis ACL permissions were not checked command by command (" +
                  acl.why_unchecked +
                  "); grant the user +acl|dryrun to have them checked at start "
                  "(docs/OPERATIONS.md, \"Redis ACLs\")";
  std::string cleanup_error;
  const ports::write_outcome canary = store.probe(cleanup_error);
  if (!cleanup_error.empty())
    spdlog::warn(
        "start-up check: the probe keys (telemetry:probe:{0}, journal:probe:{0}, "
        "device:probe:{0}) were not deleted: {1}",
        usage.instance, cleanup_error);
  if (canary.ok) return v;
  // The store named the cause (an ACL refusal names the command of its Function).
  const ports::failure_cause& cause = canary.cause;
  if (canary.under_replicated || cause.label == "replicas" || cause.label == "loading") {
    // Redis can take the writes; it cannot confirm them as asked yet. Not a refusal:
    // replicas may be on their way.
    v.not_ready = describe(cause);
    return v;
  }
  v.exit_code = 1;
  v.refusal = "the canary persist through the writers' path failed: " + describe(cause);
  return v;
}

}  // namespace tgw::infra::health
