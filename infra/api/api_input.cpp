#include "infra/api/api_input.hpp"

#include <algorithm>
#include <charconv>

#include "codecs/command.hpp"
#include "infra/api/tokens.hpp"
#include "infra/http/router.hpp"
#include "infra/text/duration.hpp"
#include "infra/text/human_time.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra::api {
namespace {

using json = nlohmann::ordered_json;

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

std::optional<std::int64_t> integer(std::string_view text) {
  std::int64_t n = 0;
  if (text.empty()) return std::nullopt;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return n;
}

api_error bad(std::string code, std::string message) {
  return {400, std::move(code), std::move(message)};
}

// A query parameter's value for a message: what was sent, made safe and short.
std::string shown(std::string_view value) {
  std::string s = terminal_safe(value.substr(0, 64));
  if (value.size() > 64) s += "...";
  return s;
}

}  // namespace

http::response json_response(unsigned status, const json& body) {
  http::response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  r.body.push_back('\n');
  return r;
}

http::response error_response(unsigned status, std::string_view code, std::string_view message) {
  return json_response(status, json{{"error", {{"code", code}, {"message", message}}}});
}

http::response error_response(const api_error& e) {
  return error_response(e.status, e.code, e.message);
}

std::optional<query_params> query_params::parse(std::string_view text,
                                                const std::vector<std::string_view>& allowed,
                                                const std::vector<std::string_view>& repeatable,
                                                api_error& error) {
  query_params q;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t amp = text.find('&', start);
    std::string_view pair =
        text.substr(start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
    start = amp == std::string_view::npos ? text.size() : amp + 1;
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    std::string raw_name(pair.substr(0, eq));
    std::string raw_value(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    std::replace(raw_name.begin(), raw_name.end(), '+', ' ');
    std::replace(raw_value.begin(), raw_value.end(), '+', ' ');
    std::string name, value;
    if (!http::percent_decode(raw_name, name) || !http::percent_decode(raw_value, value)) {
      error = bad("bad_query", "the query has a '%' not followed by two hex digits");
      return std::nullopt;
    }
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string names;
      for (const auto a : allowed) names.append(names.empty() ? "" : ", ").append(a);
      error =
          bad("unknown_parameter", "unknown query parameter '" + shown(name) + "'" +
                                       (names.empty() ? std::string(" (this resource takes none)")
                                                      : " (known: " + names + ")"));
      return std::nullopt;
    }
    if (std::find(repeatable.begin(), repeatable.end(), name) == repeatable.end() && q.one(name)) {
      error = bad("repeated_parameter", "query parameter '" + name + "' is given twice");
      return std::nullopt;
    }
    q.pairs_.emplace_back(std::move(name), std::move(value));
  }
  return q;
}

std::optional<std::string> query_params::one(std::string_view name) const {
  for (const auto& [k, v] : pairs_)
    if (k == name) return v;
  return std::nullopt;
}

std::vector<std::string> query_params::all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : pairs_)
    if (k == name) out.push_back(v);
  return out;
}

std::optional<api_error> imei_problem(std::string_view imei) {
  if ((imei.size() == 15 || imei.size() == 16) && all_digits(imei)) return std::nullopt;
  return bad("bad_imei", "an IMEI is 15 or 16 digits: '" + shown(imei) + "'");
}

std::optional<std::int64_t> integer_param(const query_params& q, std::string_view name,
                                          std::int64_t min, std::int64_t max, std::int64_t fallback,
                                          api_error& error) {
  const auto text = q.one(name);
  if (!text) return fallback;
  const auto n = integer(*text);
  if (!n || *n < min || *n > max) {
    error = bad("bad_" + std::string(name), std::string(name) + " is a whole number from " +
                                                std::to_string(min) + " to " + std::to_string(max) +
                                                ": '" + shown(*text) + "'");
    return std::nullopt;
  }
  return n;
}

std::optional<std::optional<bool>> bool_param(const query_params& q, std::string_view name,
                                              api_error& error) {
  // Built in place: GCC 12 at -O3 takes a nested optional returned from a temporary
  // for maybe uninitialized.
  std::optional<std::optional<bool>> out;
  const auto text = q.one(name);
  if (!text || *text == "true" || *text == "false") {
    out.emplace();
    if (text) *out = *text == "true";
    return out;
  }
  error = bad("bad_" + std::string(name),
              std::string(name) + " is true or false: '" + shown(*text) + "'");
  return out;
}

std::optional<std::int64_t> parse_time(std::string_view text) {
  if (all_digits(text)) return integer(text);
  // "2026-11-26T15:02:03.123Z": the second, then the milliseconds.
  if (text.size() == 24 && text[19] == '.' && text[23] == 'Z' && all_digits(text.substr(20, 3))) {
    const auto seconds = parse_utc_time(std::string(text.substr(0, 19)) + "Z");
    if (!seconds) return std::nullopt;
    return *seconds + *integer(text.substr(20, 3));
  }
  return parse_utc_time(text);
}

std::optional<std::int64_t> time_param(const query_params& q, std::string_view name,
                                       api_error& error) {
  const auto text = q.one(name);
  if (!text) return 0;
  const auto t = parse_time(*text);
  if (!t) {
    error = bad("bad_" + std::string(name),
                std::string(name) +
                    " is a time: ms since the epoch or ISO 8601 UTC (2026-11-26T15:02:03Z, "
                    "2026-11-26T15:02:03.123Z, 2026-11-26): '" +
                    shown(*text) + "'");
    return std::nullopt;
  }
  return t;
}

std::optional<std::optional<std::chrono::milliseconds>> duration_param(const query_params& q,
                                                                       std::string_view name,
                                                                       api_error& error) {
  const auto text = q.one(name);
  if (!text) return std::optional<std::chrono::milliseconds>{};
  const auto d = parse_duration(*text);
  if (!d) {
    error = bad("bad_" + std::string(name), std::string(name) +
                                                " is a duration (30s, 10m, 2h, 500ms, or "
                                                "seconds): '" +
                                                shown(*text) + "'");
    return std::nullopt;
  }
  return std::optional<std::chrono::milliseconds>{*d};
}

std::optional<command_body> parse_command_body(std::string_view body,
                                               std::optional<std::string_view> type,
                                               const command_rules& rules, api_error& error) {
  if (type && !(type->starts_with("application/json") &&
                (type->size() == 16 || (*type)[16] == ';' || (*type)[16] == ' '))) {
    error = {415, "unsupported_media_type",
             "a command is sent as application/json, not '" + shown(*type) + "'"};
    return std::nullopt;
  }
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    error = bad("bad_json", "the body is not JSON");
    return std::nullopt;
  }
  if (!j.is_object()) {
    error = bad("bad_json", "the body is a JSON object: {\"text\": \"getinfo\"}");
    return std::nullopt;
  }
  command_body c;
  for (const auto& [name, value] : j.items()) {
    if (name == "text") {
      if (!value.is_string()) {
        error = bad("bad_text", "text is a string");
        return std::nullopt;
      }
      c.text = value.get<std::string>();
    } else if (name == "codec") {
      if (!value.is_number_integer() ||
          (value.get<std::int64_t>() != 12 && value.get<std::int64_t>() != 14)) {
        error = bad("bad_codec", "codec is 12 or 14");
        return std::nullopt;
      }
      c.codec = static_cast<int>(value.get<std::int64_t>());
    } else if (name == "timeout_s") {
      if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
          value.get<std::int64_t>() > rules.max_timeout_s) {
        error = bad("bad_timeout",
                    "timeout_s is a whole number of seconds from 0 (never expires) "
                    "to " +
                        std::to_string(rules.max_timeout_s));
        return std::nullopt;
      }
      c.timeout_s = value.get<std::int64_t>();
    } else if (name == "queue_if_offline") {
      if (!value.is_boolean()) {
        error = bad("bad_queue_if_offline", "queue_if_offline is true or false");
        return std::nullopt;
      }
      c.queue_if_offline = value.get<bool>();
    } else {
      error = bad("unknown_field", "unknown field '" + shown(name) +
                                       "' (a command has text, codec, timeout_s, "
                                       "queue_if_offline)");
      return std::nullopt;
    }
  }
  if (!j.contains("text")) {
    error = bad("missing_text", "a command needs its text: {\"text\": \"getinfo\"}");
    return std::nullopt;
  }
  if (c.text.empty() || c.text.size() > rules.max_text_bytes) {
    error = bad("bad_text_length", "text is 1 to " + std::to_string(rules.max_text_bytes) +
                                       " bytes, not " + std::to_string(c.text.size()));
    return std::nullopt;
  }
  if (!rules.allow_control_characters) {
    if (const auto at = codecs::find_control_character(c.text)) {
      const auto byte = static_cast<unsigned char>(c.text[*at]);
      static constexpr char hex[] = "0123456789ABCDEF";
      error = bad("control_character", std::string("text holds a control character (0x") +
                                           hex[byte >> 4U] + hex[byte & 0xFU] + " at byte " +
                                           std::to_string(*at) +
                                           "): a device reads its command as one line");
      return std::nullopt;
    }
  }
  return c;
}

std::string fingerprint(std::string_view imei, const command_body& c) {
  return sha256_hex(std::string(imei) + '\n' + std::to_string(c.codec) + '\n' +
                    std::to_string(c.timeout_s) + '\n' + (c.queue_if_offline ? "1" : "0") + '\n' +
                    c.text);
}

std::optional<api_error> idempotency_key_problem(std::string_view key) {
  const bool printable = std::all_of(key.begin(), key.end(), [](char ch) {
    return static_cast<unsigned char>(ch) >= 0x21 && static_cast<unsigned char>(ch) <= 0x7E;
  });
  if (!key.empty() && key.size() <= 255 && printable) return std::nullopt;
  return bad("bad_idempotency_key",
             "Idempotency-Key is 1 to 255 printable ASCII characters without spaces (a UUID)");
}

}  // namespace tgw::infra::api
