#include "infra/cli/command_rows.hpp"

#include "infra/text/hex.hpp"
#include "infra/text/human_time.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra {
namespace {

nlohmann::ordered_json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
}

nlohmann::ordered_json time_or_null(std::int64_t ms) {
  return ms == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(ms);
}

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : terminal_safe(s);
}

// The reply as a person reads it: its text, or its bytes where it is no text, every
// byte a terminal would act on escaped.
std::string reply(const commands::command_record& r) {
  if (!r.response.empty() || r.response_hex.empty()) return terminal_safe(r.response);
  const auto bytes = parse_hex(r.response_hex);
  if (!bytes) return "hex:" + terminal_safe(r.response_hex);
  return terminal_safe(
      std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
}

// What came of it, in a word or the device's own: the reply, the failure's reason
// (with the reply, if the device gave one), or where it waits.
std::string outcome(const commands::command_record& r) {
  const std::string answer = reply(r);
  if (r.status == "responded") return answer.empty() ? "-" : answer;
  if (r.status == "failed")
    return terminal_safe(r.failure_reason) + (answer.empty() ? "" : " (" + answer + ")");
  if (r.status == "queued") return "until the device connects";
  if ((r.status == "sent" || r.status == "dispatched") && !r.instance.empty())
    return "on " + terminal_safe(r.instance);
  return "-";
}

}  // namespace

text_table command_table(const std::vector<commands::command_record>& commands,
                         std::int64_t now_ms) {
  text_table table({"PUBLISHED", "STATUS", "TEXT", "BY", "OUTCOME", "COMMAND ID"});
  for (const commands::command_record& r : commands) {
    const std::int64_t at = r.first_ms();
    table.add({at == 0 ? "-" : time_and_age(at, now_ms), r.status,
               r.payload.empty() ? "-" : "\"" + terminal_safe(r.payload) + "\"",
               or_dash(r.publisher), outcome(r), terminal_safe(r.command_id)});
  }
  return table;
}

nlohmann::ordered_json reply_text_json(std::string_view status, const std::string& response,
                                       const std::string& response_hex) {
  if (status != "responded") return text_or_null(response);
  // Bytes and no text: the reply is binary, which `response` never holds.
  if (response.empty() && !response_hex.empty()) return nullptr;
  return response;
}

nlohmann::ordered_json reply_hex_json(std::string_view status, const std::string& response_hex) {
  return status == "responded" ? nlohmann::ordered_json(response_hex) : text_or_null(response_hex);
}

nlohmann::ordered_json command_json(const commands::command_record& r) {
  nlohmann::ordered_json j;
  j["command_id"] = r.command_id;
  j["status"] = r.status;
  j["text"] = text_or_null(r.payload);
  j["codec"] = text_or_null(r.codec);
  j["publisher"] = text_or_null(r.publisher);
  j["response"] = reply_text_json(r.status, r.response, r.response_hex);
  j["response_hex"] = reply_hex_json(r.status, r.response_hex);
  j["failure_reason"] = text_or_null(r.failure_reason);
  j["instance"] = text_or_null(r.instance);
  j["expires_at"] = r.expires_at_s == 0 ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(r.expires_at_s);
  j["published_ms"] = time_or_null(r.published_ms);
  j["dispatched_ms"] = time_or_null(r.dispatched_ms);
  j["resolved_ms"] = time_or_null(r.resolved_ms);
  return j;
}

}  // namespace tgw::infra
