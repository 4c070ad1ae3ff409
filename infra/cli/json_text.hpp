#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tgw::infra {

/// A JSON document as one line of ASCII: every other character escaped, and bytes that
/// are not UTF-8 (a device's reply may hold any) replaced rather than thrown on, so
/// that any JSON reader takes the line and no raw byte reaches a terminal.
[[nodiscard]] inline std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

}  // namespace tgw::infra
