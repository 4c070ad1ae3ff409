#include "infra/telemetry/projection.hpp"

#include <algorithm>
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

/// `recent` with `fingerprint` in front, the oldest beyond earlier_fingerprint_count
/// dropped: what the Lua's remember() writes.
std::string remember(const std::optional<std::string>& recent, const std::string& fingerprint) {
  std::string out = fingerprint;
  std::size_t kept = 1;
  std::string_view rest = recent ? std::string_view(*recent) : std::string_view{};
  while (kept < earlier_fingerprint_count && !rest.empty()) {
    const auto start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const auto end = std::min(rest.find(' '), rest.size());
    out.append(" ").append(rest.substr(0, end));
    rest.remove_prefix(end);
    ++kept;
  }
  return out;
}

}  // namespace

bool recently_accepted(const device_projection& p, const std::string& fingerprint) {
  if (p.last_fingerprint == fingerprint) return true;
  if (!p.earlier_fingerprints) return false;
  return (" " + *p.earlier_fingerprints + " ").find(" " + fingerprint + " ") != std::string::npos;
}

void apply(device_projection& p, const field_list& event_fields) {
  const std::string* type = find(event_fields, "type");
  if (type == nullptr) return;
  // Each branch mirrors what the live function writes for that event.
  if (*type == "identified" || *type == "disconnected") {
    // emplace with a length: GCC 12 at -O3 warns (-Wrestrict, a false positive) on
    // assigning a string literal to an optional<string>.
    p.online.emplace(*type == "identified" ? "1" : "0", 1);
    copy(p.last_seen_ms, event_fields, "at_ms");
    copy(p.instance, event_fields, "instance");
    if (*type == "identified") {
      copy(p.connected_ms, event_fields, "at_ms");
      p.records_at_connect = p.records_total.value_or(0);
    }
  } else if (*type == "records_accepted") {
    // The fingerprint replaced goes to the front of the earlier ones, as in the Lua.
    p.earlier_fingerprints = p.last_fingerprint
                                 ? remember(p.earlier_fingerprints, *p.last_fingerprint)
                                 : p.earlier_fingerprints.value_or("");
    copy(p.last_fingerprint, event_fields, "fingerprint");
    copy(p.last_seen_ms, event_fields, "at_ms");
    copy(p.last_ts, event_fields, "pos_ts");
    copy(p.lon, event_fields, "lon");
    copy(p.lat, event_fields, "lat");
    copy(p.speed, event_fields, "speed");
    copy(p.satellites, event_fields, "satellites");
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
  put("connected_ms", p.connected_ms);
  if (p.records_at_connect)
    out.emplace_back("records_at_connect", std::to_string(*p.records_at_connect));
  put("last_fingerprint", p.last_fingerprint);
  put("earlier_fingerprints", p.earlier_fingerprints);
  put("last_ts", p.last_ts);
  put("lon", p.lon);
  put("lat", p.lat);
  put("speed", p.speed);
  put("satellites", p.satellites);
  if (p.records_total) out.emplace_back("records_total", std::to_string(*p.records_total));
  return out;
}

device_projection parse(const field_list& hash) {
  device_projection p;
  auto count = [&](std::optional<std::int64_t>& to, std::string_view name) {
    const std::string* v = find(hash, name);
    std::int64_t n = 0;
    if (v != nullptr &&
        std::from_chars(v->data(), v->data() + v->size(), n).ptr == v->data() + v->size() &&
        !v->empty())
      to = n;
  };
  copy(p.online, hash, "online");
  copy(p.last_seen_ms, hash, "last_seen_ms");
  copy(p.instance, hash, "instance");
  copy(p.connected_ms, hash, "connected_ms");
  count(p.records_at_connect, "records_at_connect");
  copy(p.last_fingerprint, hash, "last_fingerprint");
  copy(p.earlier_fingerprints, hash, "earlier_fingerprints");
  copy(p.last_ts, hash, "last_ts");
  copy(p.lon, hash, "lon");
  copy(p.lat, hash, "lat");
  copy(p.speed, hash, "speed");
  copy(p.satellites, hash, "satellites");
  count(p.records_total, "records_total");
  return p;
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
