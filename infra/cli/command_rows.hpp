#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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

/// A command's reply for --json: `response` is its text, `response_hex` its bytes. A
/// command that responded has a reply, so its bytes are a string even when there are
/// none (""), and so is its text unless the bytes are no text (null); any other status
/// has null where nothing came.
[[nodiscard]] nlohmann::ordered_json reply_text_json(std::string_view status,
                                                     const std::string& response,
                                                     const std::string& response_hex);
[[nodiscard]] nlohmann::ordered_json reply_hex_json(std::string_view status,
                                                    const std::string& response_hex);

}  // namespace tgw::infra
