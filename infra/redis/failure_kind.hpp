#pragma once

#include <cstdint>
#include <string_view>

namespace tgw::infra::redis {

/// Why a Redis call failed, decided once where its reply or the client's own failure is
/// made (redis::value::failure), so that callers branch on a type, never on the words.
/// One value per cause that a caller or infra/redis/failure_cause treats apart.
enum class failure_kind : std::uint8_t {
  none,           ///< Not a failure.
  unreachable,    ///< The client's own: no connection, or it broke; the command may have run.
  timeout,        ///< The client's own: the server took no bytes or sent no reply in time.
  no_permission,  ///< NOPERM, or an ACL refusal inside a Function.
  out_of_memory,  ///< OOM: maxmemory reached.
  read_only,      ///< READONLY or MASTERDOWN: a replica, or a master that lost its own.
  moved,          ///< MOVED or ASK: the slot is served elsewhere.
  cross_slot,     ///< CROSSSLOT: keys of several slots in one call.
  cluster_down,   ///< CLUSTERDOWN: a slot without a master.
  try_again,      ///< TRYAGAIN: a multi-key call during a reshard.
  loading,        ///< LOADING: the server is loading its data set.
  no_replicas,    ///< NOREPLICAS: fewer replicas than min-replicas-to-write.
  disk,           ///< MISCONF: the server cannot save to its disk.
  busy,           ///< BUSY: a script runs.
  script,         ///< A Function or script failed, or is not loaded.
  other,          ///< Any other error reply.
};

/// The kind of a Redis error reply, by its code word ("OOM ...", "MOVED 3999 ...") and,
/// for refusals raised inside a Function, by Redis' own wording.
[[nodiscard]] failure_kind classify_error_reply(std::string_view error) noexcept;

/// True for the client's own failures (unreachable, timeout): nothing answered, so the
/// call may be sent again once the server is back.
[[nodiscard]] constexpr bool is_transport(failure_kind kind) noexcept {
  return kind == failure_kind::unreachable || kind == failure_kind::timeout;
}

/// True where the call did not run where it was sent and may go again to the slot's
/// master: moved, no master for the slot, a reshard in progress.
[[nodiscard]] constexpr bool is_redirect(failure_kind kind) noexcept {
  return kind == failure_kind::moved || kind == failure_kind::cluster_down ||
         kind == failure_kind::try_again;
}

/// The enumerator's name ("unreachable"), for messages and tests.
[[nodiscard]] std::string_view name_of(failure_kind kind) noexcept;

/// How the text of the client's own failures begins, ahead of why ("IO connect to
/// 127.0.0.1:6379: Connection refused"): for people reading a log. Programs read
/// value::failure instead.
inline constexpr std::string_view transport_text_prefix = "IO ";

/// The text of a failure without transport_text_prefix: why, in the client's words.
[[nodiscard]] std::string_view transport_reason(std::string_view text) noexcept;

/// The kind of a failure that reached its reader as text only: a store whose interface
/// reports errors as strings (registry, commands) copies value::text, and its reader
/// classifies here, in the one place that knows how the client writes its own failures.
[[nodiscard]] failure_kind failure_of_text(std::string_view text) noexcept;

}  // namespace tgw::infra::redis
