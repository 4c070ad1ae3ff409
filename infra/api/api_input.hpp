#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "infra/http/message.hpp"

namespace tgw::infra::api {

/// A refusal of what a client sent, or of what the service cannot do now: the status,
/// a stable code ("bad_imei"), and a sentence that says what to change.
struct api_error {
  unsigned status = 400;
  std::string code;
  std::string message;
};

/// `{"error": {"code": ..., "message": ...}}` with its status, as every error of the API
/// is answered.
[[nodiscard]] http::response error_response(const api_error& e);
[[nodiscard]] http::response error_response(unsigned status, std::string_view code,
                                            std::string_view message);
/// A JSON body. Text that is no UTF-8 cannot reach it: what would be is replaced.
[[nodiscard]] http::response json_response(unsigned status, const nlohmann::ordered_json& body);

/// A query string, decoded: `a=1&b=x%20y` as {a: 1, b: "x y"} ('+' is a space).
class query_params {
 public:
  /// Refuses a malformed escape, a parameter not in `allowed`, or one given twice that
  /// is not in `repeatable`.
  [[nodiscard]] static std::optional<query_params> parse(
      std::string_view text, const std::vector<std::string_view>& allowed,
      const std::vector<std::string_view>& repeatable, api_error& error);
  [[nodiscard]] std::optional<std::string> one(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> all(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

/// Why `imei` is none (15 or 16 digits), as a 400 bad_imei; nullopt when it is one.
[[nodiscard]] std::optional<api_error> imei_problem(std::string_view imei);

/// An integer parameter within [min, max], `fallback` when absent.
[[nodiscard]] std::optional<std::int64_t> integer_param(const query_params& q,
                                                        std::string_view name, std::int64_t min,
                                                        std::int64_t max, std::int64_t fallback,
                                                        api_error& error);
/// "true" or "false"; nullopt inside when absent.
[[nodiscard]] std::optional<std::optional<bool>> bool_param(const query_params& q,
                                                            std::string_view name,
                                                            api_error& error);
/// A time: ms since the epoch ("1700000000000") or ISO 8601 UTC ("2026-11-26T15:02:03Z",
/// with or without ".123" ms, or a date "2026-11-26"); 0 when absent.
[[nodiscard]] std::optional<std::int64_t> time_param(const query_params& q, std::string_view name,
                                                     api_error& error);
/// A duration ("10m", "30s", "1h", "500ms", or plain seconds); nullopt inside when absent.
[[nodiscard]] std::optional<std::optional<std::chrono::milliseconds>> duration_param(
    const query_params& q, std::string_view name, api_error& error);
/// ms since the epoch from the ISO 8601 forms above or digits; nullopt for anything else.
[[nodiscard]] std::optional<std::int64_t> parse_time(std::string_view text);

/// The body of POST /v1/devices/{imei}/commands, checked.
struct command_body {
  std::string text;
  int codec = 12;
  std::int64_t timeout_s = 300;  ///< The command expires undelivered after this; 0 never.
  bool queue_if_offline = false;
};

/// What a command body may hold.
struct command_rules {
  std::size_t max_text_bytes = 512;
  bool allow_control_characters = false;
  std::int64_t max_timeout_s = 7 * 24 * 3600;
};

/// Reads and checks a command body: JSON (the content type, when given, is
/// application/json), an object with `text` (1 to max_text_bytes, no control
/// character) and optionally `codec` (12 or 14), `timeout_s`, `queue_if_offline`;
/// nothing else.
[[nodiscard]] std::optional<command_body> parse_command_body(std::string_view body,
                                                             std::optional<std::string_view> type,
                                                             const command_rules& rules,
                                                             api_error& error);
/// What tells a retry of a request from another request under one Idempotency-Key:
/// the SHA-256 of the device and the checked body, whatever its spacing or key order.
[[nodiscard]] std::string fingerprint(std::string_view imei, const command_body& c);
/// Why an Idempotency-Key header is refused (1 to 255 printable ASCII characters), or
/// nullopt.
[[nodiscard]] std::optional<api_error> idempotency_key_problem(std::string_view key);

}  // namespace tgw::infra::api
