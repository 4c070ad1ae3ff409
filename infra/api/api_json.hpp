#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "infra/api/api_store.hpp"
#include "infra/commands/command_publisher.hpp"

namespace tgw::infra::api {

using json = nlohmann::ordered_json;

// The API's JSON, as docs/api/openapi.json describes it. As in record format 3, every
// 64-bit value is a decimal string, and every time is there twice: `..._ms`, the
// decimal string of ms since the epoch, and `..._at`, ISO 8601 UTC to the millisecond.

/// The decimal integer `text` holds, whole; nullopt when absent, empty or anything else
/// (Redis' fields are text).
[[nodiscard]] std::optional<std::int64_t> integer_text(const std::optional<std::string>& text);

/// Sets `name_ms` and `name_at` of `j` from `ms` (both null when absent).
void put_time(json& j, const std::string& name, std::optional<std::int64_t> ms);

/// A device of GET /v1/devices.
[[nodiscard]] json device_json(const telemetry::listed_device& d);
/// GET /v1/devices/{imei}: the device, its projection's fields as stored, its open
/// commands.
[[nodiscard]] json device_detail_json(const device_detail& d);
/// A command: what is known of it, its outcome once it has one.
[[nodiscard]] json command_json(const std::string& imei, const commands::command_record& r);
/// The record a just-published command is: its text and status, no outcome yet.
[[nodiscard]] commands::command_record submitted_record(const command_submission& c,
                                                        const std::string& status);
/// The record with a response's outcome folded in.
void fold_outcome(commands::command_record& r, const commands::command_response& outcome);

}  // namespace tgw::infra::api
