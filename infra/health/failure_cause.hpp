#pragma once

#include <string>
#include <string_view>

#include "infra/redis/failure_kind.hpp"

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

/// Names the cause of a failed Redis call of `kind` (redis::value::failure, as the client
/// classified it), whose text `error` is Redis' words or the client's. The kind picks
/// the cause; the text gives the detail, and for the client's own failures the phrase
/// (redis::link_errors) that says which fix applies. `under_replicated` marks a write
/// the master took but WAIT did not confirm on enough replicas (the text then is the
/// store's own "replicas: WAIT confirmed ..." line). `library_source` is the Lua source
/// of the Function library the call ran, if any: an ACL refusal inside a Function names
/// only a line of it, and the line names the command. `on_cluster`: the caller talks to
/// a Redis Cluster through the cluster client, so MOVED and ASK mean a slot moved (a
/// failover, a reshard) and the write goes again to its new master, not that a cluster
/// was named with redis://.
[[nodiscard]] failure_cause classify_redis_failure(redis::failure_kind kind, std::string_view error,
                                                   bool under_replicated = false,
                                                   std::string_view library_source = {},
                                                   bool on_cluster = false);

/// The same for a failure that reached its reader as text only (a store whose
/// interface reports errors as strings): its kind is read from the text by
/// redis::failure_of_text.
[[nodiscard]] failure_cause classify_redis_failure(std::string_view error,
                                                   bool under_replicated = false,
                                                   std::string_view library_source = {},
                                                   bool on_cluster = false);

/// The client could not connect: `why` is what ensure_connected() said.
[[nodiscard]] failure_cause classify_connect_failure(std::string_view why);

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
