#include "infra/telemetry/projection.hpp"

#include <charconv>
#include <map>
#include <string_view>

namespace tgw::infra::telemetry {
namespace {

const std::string* find(const field_list& fields, std::string_view name) {
  for (const auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}

void copy(std::optional<std::string>& to, const field_list& fields, std::string_view name) {
  if (const std::string* v = find(fields, name)) to = *v;
}

std::int64_t to_int(const std::string* text) {
  std::int64_t n = 0;
  if (text != nullptr) std::from_chars(text->data(), text->data() + text->size(), n);
  return n;
}

}  // namespace

void apply(device_projection& p, const field_list& event_fields) {
  const std::string* type = find(event_fields, "type");
  if (type == nullptr) return;
  // Each branch mirrors what the live function writes for that event.
  if (*type == "identified" || *type == "disconnected") {
    // One char rather than a literal: GCC 12 at -O3 reports a false -Wrestrict for
    // assigning a literal to an optional<string>, which fails the release build.
    p.online.emplace(1, *type == "identified" ? '1' : '0');
    copy(p.last_seen_ms, event_fields, "at_ms");
    copy(p.instance, event_fields, "instance");
  } else if (*type == "records_accepted") {
    copy(p.last_fingerprint, event_fields, "fingerprint");
    copy(p.last_seen_ms, event_fields, "at_ms");
    copy(p.last_ts, event_fields, "pos_ts");
    copy(p.lon, event_fields, "lon");
    copy(p.lat, event_fields, "lat");
    copy(p.speed, event_fields, "speed");
    copy(p.instance, event_fields, "instance");
    p.records_total = p.records_total.value_or(0) + to_int(find(event_fields, "records"));
  } else if (*type == "packet_resent") {
    copy(p.last_seen_ms, event_fields, "at_ms");
  }
}

field_list render(const device_projection& p) {
  field_list out;
  auto put = [&out](const char* name, const std::optional<std::string>& v) {
    if (v) out.emplace_back(name, *v);
  };
  put("online", p.online);
  put("last_seen_ms", p.last_seen_ms);
  put("instance", p.instance);
  put("last_fingerprint", p.last_fingerprint);
  put("last_ts", p.last_ts);
  put("lon", p.lon);
  put("lat", p.lat);
  put("speed", p.speed);
  if (p.records_total) out.emplace_back("records_total", std::to_string(*p.records_total));
  return out;
}

std::vector<field_difference> compare(const field_list& current, const field_list& rebuilt) {
  std::map<std::string, field_difference> by_name;
  for (const auto& [k, v] : current) by_name[k] = {k, v, std::nullopt};
  for (const auto& [k, v] : rebuilt) {
    auto& d = by_name[k];
    d.field = k;
    d.rebuilt = v;
  }
  std::vector<field_difference> out;
  for (auto& [name, d] : by_name)
    if (d.current != d.rebuilt) out.push_back(std::move(d));
  return out;
}

}  // namespace tgw::infra::telemetry
