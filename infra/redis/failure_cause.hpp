#pragma once

#include <string>
#include <string_view>

#include "actors/ports/store_failure.hpp"
#include "infra/redis/failure_kind.hpp"

namespace tgw::infra::redis {

class value;

/// Names the cause of a failed Redis call of `kind` (value::failure, as the client
/// classified it), whose text `error` is Redis' words or the client's. The kind picks
/// the cause; the text gives the detail, and for the client's own failures the phrase
/// (link_errors) that says which fix applies. `under_replicated` marks a write the
/// master took but WAIT did not confirm on enough replicas (the text then is the
/// store's own "replicas: WAIT confirmed ..." line). `library_source` is the Lua source
/// of the Function library the call ran, if any: an ACL refusal inside a Function names
/// only a line of it, and the line names the command. `on_cluster`: the caller talks to
/// a Redis Cluster through the cluster client, so MOVED and ASK mean a slot moved (a
/// failover, a reshard) and the write goes again to its new master, not that a cluster
/// was named with redis://.
[[nodiscard]] ports::failure_cause classify_redis_failure(failure_kind kind, std::string_view error,
                                                          bool under_replicated = false,
                                                          std::string_view library_source = {},
                                                          bool on_cluster = false);

/// The same for a failure that reached its reader as text only: its kind is read from
/// the text by failure_of_text.
[[nodiscard]] ports::failure_cause classify_redis_failure(std::string_view error,
                                                          bool under_replicated = false,
                                                          std::string_view library_source = {},
                                                          bool on_cluster = false);

/// The client could not connect: `why` is what ensure_connected() said.
[[nodiscard]] ports::failure_cause classify_connect_failure(std::string_view why);

/// A cause that is the set-up's, not the moment's: a certificate, a password, a
/// database number, a URL of the wrong kind. Waiting does not cure it, so a start-up
/// that meets it exits 2 (a usage error) rather than 1.
[[nodiscard]] bool is_setup_failure(const ports::failure_cause& cause);

/// The port's kind of a Redis failure kind: what the actors branch on.
[[nodiscard]] ports::failure_kind port_kind(failure_kind kind) noexcept;

/// A failed call as a port reports it: its kind and its cause (classify_redis_failure
/// of the same arguments). `what` ("register 356307042441013", "heartbeat"), when
/// given, leads the cause's detail.
[[nodiscard]] ports::store_failure store_failure_of(failure_kind kind, std::string_view error,
                                                    std::string_view library_source = {},
                                                    std::string_view what = {},
                                                    bool under_replicated = false,
                                                    bool on_cluster = false);

/// The same for a failure known by its text only (failure_of_text reads its kind).
[[nodiscard]] ports::store_failure store_failure_of_text(std::string_view error,
                                                         std::string_view library_source = {},
                                                         std::string_view what = {});

}  // namespace tgw::infra::redis
