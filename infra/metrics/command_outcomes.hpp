#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace tgw::infra::metrics {

/// How the commands this instance answered ended, as the `outcome` label of
/// teltonika_command_outcomes_total: the status for a success, the failure reason for a
/// failure (docs/COMMANDS.md), `other` for a reason not listed here.
inline constexpr std::array<std::string_view, 10> command_outcome_names = {
    "responded",     "delivered",      "timeout",          "socket_closed",
    "imei_mismatch", "codec_mismatch", "write_queue_full", "expired_before_delivery",
    "malformed",     "other"};

/// The index in command_outcome_names of a command answered `status` with
/// `failure_reason` (`malformed: <why>` counts as malformed).
[[nodiscard]] std::size_t command_outcome_index(std::string_view status,
                                                std::string_view failure_reason) noexcept;

}  // namespace tgw::infra::metrics
