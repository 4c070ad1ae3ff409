#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "infra/cli/text_table.hpp"
#include "infra/commands/command_history.hpp"

namespace tgw::infra {

/// Commands of one device as a table for people (`tgw command history`, and the open
/// commands of `tgw devices --imei`): when, status, text, publisher, outcome, id;
/// times relative to `now_ms`, every text terminal-safe.
[[nodiscard]] text_table command_table(const std::vector<commands::command_record>& commands,
                                       std::int64_t now_ms);

/// One command with raw values, for --json: times in ms since the epoch (null where
/// unknown), texts as stored.
[[nodiscard]] nlohmann::ordered_json command_json(const commands::command_record& r);

}  // namespace tgw::infra
