#include "infra/api/api_json.hpp"

#include <charconv>

#include "infra/json/frame_json.hpp"

namespace tgw::infra::api {
namespace {

json text_or_null(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json small_or_null(const std::optional<std::string>& text) {
  const auto n = integer_text(text);
  return n ? json(*n) : json(nullptr);
}

std::optional<std::int64_t> known(std::int64_t ms) {
  return ms == 0 ? std::nullopt : std::optional<std::int64_t>(ms);
}

}  // namespace

std::optional<std::int64_t> integer_text(const std::optional<std::string>& text) {
  std::int64_t n = 0;
  if (!text || text->empty()) return std::nullopt;
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || ptr != text->data() + text->size()) return std::nullopt;
  return n;
}

void put_time(json& j, const std::string& name, std::optional<std::int64_t> ms) {
  if (!ms || *ms < 0) {
    j[name + "_at"] = nullptr;
    j[name + "_ms"] = nullptr;
    return;
  }
  j[name + "_at"] = iso8601_utc_ms(static_cast<std::uint64_t>(*ms));
  j[name + "_ms"] = std::to_string(*ms);
}

json device_json(const telemetry::listed_device& d) {
  const auto& p = d.projection;
  json j;
  j["imei"] = d.imei;
  j["online"] = p.online ? json(*p.online == "1") : json(nullptr);
  // The registry names a TCP device's instance; a UDP device's is in its projection.
  std::string instance = d.owner;
  if (instance.empty() && p.online == "1" && p.instance) instance = *p.instance;
  j["instance"] = text_or_null(instance);
  j["instance_alive"] = d.owner.empty() ? json(nullptr) : json(d.owner_alive);
  put_time(j, "connected", integer_text(p.connected_ms));
  put_time(j, "last_seen", integer_text(p.last_seen_ms));
  const auto lat = integer_text(p.lat);
  const auto lon = integer_text(p.lon);
  if (lat && lon) {
    json pos;
    // The record's own time: any 64-bit value the device stamped, kept as its string.
    pos["time_ms"] = p.last_ts ? json(*p.last_ts) : json(nullptr);
    std::uint64_t ts = 0;
    const bool ts_ok =
        p.last_ts &&
        std::from_chars(p.last_ts->data(), p.last_ts->data() + p.last_ts->size(), ts).ec ==
            std::errc();
    pos["time"] = ts_ok ? json(iso8601_utc_ms(ts)) : json(nullptr);
    pos["lat"] = static_cast<double>(*lat) / 1e7;
    pos["lon"] = static_cast<double>(*lon) / 1e7;
    pos["speed"] = small_or_null(p.speed);
    pos["satellites"] = small_or_null(p.satellites);
    j["position"] = pos;
  } else {
    j["position"] = nullptr;
  }
  j["records_total"] = p.records_total ? json(std::to_string(*p.records_total)) : json(nullptr);
  return j;
}

json device_detail_json(const device_detail& d) {
  json j = device_json(d.device);
  json projection = json::object();
  for (const auto& [k, v] : telemetry::render(d.device.projection)) projection[k] = v;
  j["projection"] = projection;
  json open = json::array();
  for (const auto& c : d.open_commands) open.push_back(command_json(d.device.imei, c));
  j["open_commands"] = open;
  put_time(j, "read", d.at_ms);
  return j;
}

json command_json(const std::string& imei, const commands::command_record& r) {
  json j;
  j["command_id"] = r.command_id;
  j["imei"] = imei;
  j["status"] = r.status;
  j["text"] = text_or_null(r.payload);
  const auto codec =
      integer_text(r.codec.empty() ? std::nullopt : std::optional<std::string>(r.codec));
  j["codec"] = codec ? json(*codec) : json(nullptr);
  j["publisher"] = text_or_null(r.publisher);
  j["response"] = text_or_null(r.response);
  j["response_hex"] = text_or_null(r.response_hex);
  j["failure_reason"] = text_or_null(r.failure_reason);
  j["instance"] = text_or_null(r.instance);
  put_time(j, "expires",
           r.expires_at_s == 0 ? std::nullopt : std::optional<std::int64_t>(r.expires_at_s * 1000));
  put_time(j, "published", known(r.published_ms));
  put_time(j, "dispatched", known(r.dispatched_ms));
  put_time(j, "resolved", known(r.resolved_ms));
  return j;
}

commands::command_record submitted_record(const command_submission& c, const std::string& status) {
  commands::command_record r;
  r.command_id = c.command_id;
  r.payload = c.text;
  r.codec = std::to_string(c.codec);
  r.publisher = c.publisher;
  r.status = status;
  return r;
}

void fold_outcome(commands::command_record& r, const commands::command_response& outcome) {
  r.status = outcome.status;
  r.response = outcome.response;
  r.response_hex = outcome.response_hex;
  r.failure_reason = outcome.failure_reason;
  r.resolved_ms = outcome.responded_at;
}

}  // namespace tgw::infra::api
