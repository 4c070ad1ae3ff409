#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tgw::ports {

/// Why a store call failed, for code to branch on. The adapter that talks to the store
/// decides it once, where the failure is met; an actor never reads the words.
enum class failure_kind : std::uint8_t {
  none,           ///< Not a failure.
  unreachable,    ///< No connection, or it broke: the call may have run; it may go again.
  timeout,        ///< The store took no bytes or gave no answer in time.
  no_permission,  ///< The store's user may not run the call.
  out_of_memory,  ///< The store is full.
  read_only,      ///< The store answered from a copy that takes no writes (a failover?).
  moved,          ///< The data is served elsewhere now; the call may go again there.
  unavailable,    ///< The store refuses for now (loading, busy, too few replicas, disk).
  other,          ///< Anything else the store refused.
};

/// True for the failures where nothing answered (unreachable, timeout): the call may be
/// sent again once the store is back.
[[nodiscard]] constexpr bool is_transport(failure_kind kind) noexcept {
  return kind == failure_kind::unreachable || kind == failure_kind::timeout;
}

/// The enumerator's name ("unreachable"), for messages and tests.
[[nodiscard]] std::string_view name_of(failure_kind kind) noexcept;

/// A failure in the terms an operator acts on, for a log line and a metric's label.
struct failure_cause {
  /// A short, stable name: the `reason` label of the stall gauge and the failure
  /// counter ("connection", "timeout", "tls", "noperm", "readonly", "oom", ...).
  std::string label;
  /// The store's own words (or the client's), shortened to one line.
  std::string detail;
  /// What to do about it; empty when there is nothing better to say than the detail.
  std::string fix;
};

/// "detail: fix", or the detail alone: the cause as the one line a log names it with.
[[nodiscard]] std::string describe(const failure_cause& cause);

/// What a failed store call reports: its kind, and its cause in words for the log.
struct store_failure {
  failure_kind kind = failure_kind::none;
  failure_cause cause;

  [[nodiscard]] bool failed() const noexcept { return kind != failure_kind::none; }
  /// The words for a log line ("detail: fix").
  [[nodiscard]] std::string text() const { return describe(cause); }
};

}  // namespace tgw::ports
