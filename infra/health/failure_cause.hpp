#pragma once

#include <string>
#include <string_view>

namespace tgw::infra::health {

/// Why a Redis call failed, in the terms an operator acts on.
struct failure_cause {
  /// A short, stable name: the `reason` label of the stall gauge and the failure counter
  /// (connection, timeout, tls, auth, database, sentinel, noperm, replicas, cluster_mode,
  /// slot_moved, cluster_down, oom, loading, readonly, disk, busy, function,
  /// stalled_call, other).
  std::string label;
  /// Redis' own words (or the client's, for a connection), shortened to one line.
  std::string detail;
  /// What to do about it; empty when there is nothing better to say than the detail.
  std::string fix;
};

/// Classifies a Redis error reply or a client failure ("IO ..." from redis::connection).
/// `under_replicated` marks a write the master took but WAIT did not confirm on enough
/// replicas (the text then is the store's own "replicas: WAIT confirmed ..." line).
/// `library_source` is the Lua source of the Function library the call ran, if any:
/// an ACL refusal inside a Function names only a line of it, and the line names the
/// command. `on_cluster`: the caller talks to a Redis Cluster through the cluster
/// client, so MOVED and ASK mean a slot moved (a failover, a reshard) and the write
/// goes again to its new master, not that a cluster was named with redis://.
[[nodiscard]] failure_cause classify_redis_failure(std::string_view error,
                                                   bool under_replicated = false,
                                                   std::string_view library_source = {},
                                                   bool on_cluster = false);

/// The same for a failure of `what` ("register 356307042441013", "heartbeat"), which
/// leads the detail.
[[nodiscard]] failure_cause classify_failure_of(std::string_view what, std::string_view error,
                                                std::string_view library_source = {});

/// "detail: fix", or the detail alone: the cause as the one line a log names it with.
[[nodiscard]] std::string describe(const failure_cause& cause);

/// A cause that is the set-up's, not the moment's: a certificate, a password, a
/// database number, a URL of the wrong kind. Waiting does not cure it, so a start-up
/// that meets it exits 2 (a usage error) rather than 1.
[[nodiscard]] bool is_setup_failure(const failure_cause& cause);

}  // namespace tgw::infra::health
