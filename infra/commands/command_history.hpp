#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::commands {

/// One command sent to a device, pieced together from everything Redis keeps about it
/// (docs/COMMANDS.md, "tgw command history"). Times are ms since the epoch, 0 where
/// nothing kept says.
struct command_record {
  std::string command_id;
  std::string payload;    ///< The command text; empty when no kept record has it.
  std::string codec;      ///< "12" or "14"; empty when unknown.
  std::string publisher;  ///< Who published it; empty when unknown.
  /// Where it stands: queued (waiting in commands:offline for the device to connect),
  /// sent (in an instance's stream, not yet handed to the device's session),
  /// dispatched (handed to the session: written, or waiting behind another command;
  /// no answer yet), responded, failed, delivered (its outcome), answered (it has an
  /// outcome that is no longer kept), or unknown.
  std::string status;
  std::string response;  ///< The device's answer, with responded (or failed).
  /// Its exact bytes in hex, where the stores keep them (`response_hex`, beside a
  /// `response` that holds only UTF-8 text).
  std::string response_hex;
  std::string failure_reason;  ///< With failed.
  std::string instance;        ///< The instance it was routed to, if known.
  std::int64_t expires_at_s = 0;
  std::int64_t published_ms = 0;
  std::int64_t dispatched_ms = 0;
  std::int64_t resolved_ms = 0;

  /// The earliest time known of it: what the history is ordered by.
  [[nodiscard]] std::int64_t first_ms() const noexcept;
  /// Whether it has no outcome yet (queued, sent or dispatched).
  [[nodiscard]] bool open() const noexcept {
    return status == "queued" || status == "sent" || status == "dispatched";
  }
};

/// Every command of the device `imei` that Redis still keeps, each once, in the order
/// they were published (the first time known of each). Reads, in the device's key
/// shard: its journal (`command_published`, `command_dispatched`, `command_resolved`),
/// the responses stream (entries whose `imei` is the device's), its offline queue, and
/// the outbound stream of every instance in `commands:instances`. `since_ms` (0: all)
/// leaves out commands first known before it; commands still open are always listed.
/// nullopt with `error` on a Redis failure.
[[nodiscard]] std::optional<std::vector<command_record>> read_command_history(
    redis::connection& conn, const redis::key_shards& shards, const std::string& imei,
    std::int64_t since_ms, std::string& error);

/// Only the device's open commands (queued, sent, dispatched): its offline queue and
/// the outbound streams, with the journal's events for them. Cheaper than the whole
/// history: the responses stream is not read.
[[nodiscard]] std::optional<std::vector<command_record>> read_open_commands(
    redis::connection& conn, const redis::key_shards& shards, const std::string& imei,
    std::string& error);

}  // namespace tgw::infra::commands
