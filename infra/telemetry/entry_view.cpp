#include "infra/telemetry/entry_view.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <sstream>
#include <vector>

#include "infra/json/frame_json.hpp"
#include "infra/telemetry/named_io.hpp"
#include "infra/telemetry/stored_io.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra::telemetry {
namespace {

template <class Integer>
std::optional<Integer> integer(const entry_map& f, const char* key) {
  const auto it = f.find(key);
  if (it == f.end()) return std::nullopt;
  const std::string& s = it->second;
  Integer v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string text(const entry_map& f, const char* key) {
  const auto it = f.find(key);
  return it == f.end() ? "" : it->second;
}

// A value of `io` (format 3 or 4 form) as the line shows it.
std::string shown_raw(const nlohmann::ordered_json& value) {
  if (value.is_object() && value.contains("hex")) return "0x" + value["hex"].get<std::string>();
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string shown_named(const nlohmann::ordered_json& value, const io_element_info& info) {
  if (value.is_object() && value.contains("error"))
    return "error:" + value["error"].get<std::string>();
  if (value.is_object()) return shown_raw(value);
  std::string out = value.is_string() ? value.get<std::string>() : value.dump();
  if (!info.unit.empty()) out += " " + info.unit;
  return out;
}

}  // namespace

nlohmann::ordered_json entry_json(const std::string& id, const entry_map& f,
                                  const io_dictionary* names) {
  nlohmann::ordered_json j;
  j["id"] = id;
  j["imei"] = text(f, "imei");
  // Entries before format 2 carry no v, codec or gen.
  for (const char* key : {"v", "codec", "gen"})
    if (f.contains(key)) j[key] = text(f, key);
  j["ts"] = text(f, "ts");
  if (const auto ts = integer<std::uint64_t>(f, "ts")) j["time"] = iso8601_utc_ms(*ts);
  for (const char* key : {"pri", "alt", "ang", "sat", "spd", "evt"})
    if (const auto v = integer<std::int64_t>(f, key)) j[key] = *v;
  if (const auto lat = integer<std::int64_t>(f, "lat")) j["lat"] = static_cast<double>(*lat) / 1e7;
  if (const auto lon = integer<std::int64_t>(f, "lon")) j["lon"] = static_cast<double>(*lon) / 1e7;
  const int format = integer<int>(f, "v").value_or(1);
  std::string error;
  const auto io = read_io(text(f, "io"), format, text(f, "codec"), error);
  if (!io) {
    j["io_text"] = text(f, "io");
    j["io_error"] = error;
    return j;
  }
  j["io"] = io_json(*io);
  if (names == nullptr) return j;
  std::vector<io_size_mismatch> mismatches;
  j["io_named"] = named_io(*io, *names, &mismatches);
  if (mismatches.empty()) return j;
  nlohmann::ordered_json flagged = nlohmann::ordered_json::array();
  for (const io_size_mismatch& m : mismatches)
    flagged.push_back({{"id", m.id}, {"size", m.size}, {"dictionary_size", m.dictionary_size}});
  j["io_size_mismatch"] = std::move(flagged);
  return j;
}

std::string entry_line(const nlohmann::ordered_json& j, const io_dictionary* names) {
  std::ostringstream out;
  out << j.value("time", j.value("ts", std::string())) << ' ' << j.value("imei", std::string());
  if (j.contains("lat") && j.contains("lon"))
    out << " lat " << j.at("lat").dump() << " lon " << j.at("lon").dump();
  if (j.contains("alt")) out << " alt " << j.at("alt") << " m";
  if (j.contains("spd")) out << " speed " << j.at("spd") << " km/h";
  if (j.contains("ang")) out << " angle " << j.at("ang");
  if (j.contains("sat")) out << " sats " << j.at("sat");
  if (j.contains("evt") && j.at("evt") != 0) out << " event " << j.at("evt");
  if (!j.contains("io")) {
    out << " io " << j.value("io_text", std::string()) << " (" << j.value("io_error", std::string())
        << ")";
    return terminal_safe(out.str());
  }
  out << " io {";
  bool first = true;
  for (const auto& pair : j.at("io")) {
    out << (first ? "" : ", ");
    first = false;
    const auto id = pair[0].get<std::uint16_t>();
    const io_element_info* info = names != nullptr ? names->find(id) : nullptr;
    if (info == nullptr) {
      out << id << '=' << shown_raw(pair[1]);
      continue;
    }
    stored_io_value stored{id, stored_io_value::kind_t::integer, {}};
    if (pair[1].is_object()) {
      stored.kind = stored_io_value::kind_t::bytes;
      stored.text = pair[1]["hex"].get<std::string>();
    } else {
      stored.text = pair[1].get<std::string>();
      if (pair.size() > 2) stored.size = pair[2].get<std::uint8_t>();
    }
    std::string named;
    append_named_value(named, *info, stored);
    out << info->name << '=' << shown_named(nlohmann::ordered_json::parse(named), *info);
    if (const auto m = size_mismatch(*info, stored))
      out << " (" << int{m->size} << " bytes on the wire, the dictionary says "
          << m->dictionary_size << ")";
  }
  out << '}';
  return terminal_safe(out.str());
}

}  // namespace tgw::infra::telemetry
