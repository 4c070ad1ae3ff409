#include "infra/cli/devices_command.hpp"

#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "infra/cli/command_rows.hpp"
#include "infra/cli/json_text.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/cli/text_table.hpp"
#include "infra/cli/value_checks.hpp"
#include "infra/commands/command_history.hpp"
#include "infra/json/frame_json.hpp"
#include "infra/redis/server_mode.hpp"
#include "infra/redis/stream_pages.hpp"
#include "infra/telemetry/device_listing.hpp"
#include "infra/telemetry/telemetry_keys.hpp"
#include "infra/text/duration.hpp"
#include "infra/text/human_time.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra {
namespace {

using telemetry::listed_device;
using json = nlohmann::ordered_json;

struct devices_settings {
  redis_choice redis;
  std::string imei;
  std::string instance;
  std::string silent_for;
  std::size_t events = 10;
  bool json = false;
};

/// The integer a projection field holds, or nullopt when it holds none of this type
/// (digits past its range included: they are no value, never a wrapped or zero one).
template <class Integer = std::int64_t>
std::optional<Integer> number(const std::optional<std::string>& text) {
  Integer n = 0;
  if (!text || text->empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc{} || end != text->data() + text->size()) return std::nullopt;
  return n;
}

/// The record time of the newest position: the device's own clock, any 64-bit value.
std::optional<std::uint64_t> position_ts(const telemetry::device_projection& p) {
  return number<std::uint64_t>(p.last_ts);
}

/// A record time for people: its ISO 8601 form (right for every 64-bit value) and, when
/// it is within reach of Redis' clock, how long ago.
std::string record_time_text(std::uint64_t ts, std::int64_t now) {
  // A year-long margin either side of the signed range keeps time_ago's subtraction
  // from overflowing; a clock that far off needs no age.
  constexpr std::uint64_t reach = std::uint64_t{1} << 61;
  return iso8601_utc_ms(ts) +
         (ts < reach ? " (" + time_ago(static_cast<std::int64_t>(ts), now) + ")" : std::string());
}

json number_or_null(const std::optional<std::int64_t>& n) {
  return n ? json(*n) : json(nullptr);
}

/// Degrees from the projection's integer (degrees times 10^7).
std::optional<double> degrees(const std::optional<std::string>& e7) {
  const auto n = number(e7);
  if (!n) return std::nullopt;
  return static_cast<double>(*n) / 1e7;
}

std::string degrees_text(double d) {
  char buf[32];
  (void)std::snprintf(buf, sizeof buf, "%.7f", d);
  return buf;
}

std::optional<std::int64_t> records_since_connect(const telemetry::device_projection& p) {
  if (!p.records_at_connect) return std::nullopt;
  return p.records_total.value_or(0) - *p.records_at_connect;
}

json device_json(const listed_device& d) {
  const auto& p = d.projection;
  json j;
  j["imei"] = d.imei;
  j["instance"] = d.owner.empty() ? json(nullptr) : json(d.owner);
  j["instance_alive"] = d.owner_alive;
  j["online"] = p.online ? json(*p.online == "1") : json(nullptr);
  j["connected_ms"] = number_or_null(number(p.connected_ms));
  j["last_seen_ms"] = number_or_null(number(p.last_seen_ms));
  const auto lat = degrees(p.lat);
  const auto lon = degrees(p.lon);
  if (lat && lon) {
    // The record time as the telemetry entries write it: the decimal string (a device clock may
    // stamp any 64-bit value, past what a double holds exactly) and its ISO 8601 form.
    const auto ts = position_ts(p);
    j["position"] = {{"ts_ms", ts ? json(std::to_string(*ts)) : json(nullptr)},
                     {"time", ts ? json(iso8601_utc_ms(*ts)) : json(nullptr)},
                     {"lat", *lat},
                     {"lon", *lon},
                     {"speed", number_or_null(number(p.speed))},
                     {"satellites", number_or_null(number(p.satellites))}};
  } else {
    j["position"] = nullptr;
  }
  j["records_since_connect"] = number_or_null(records_since_connect(p));
  j["records_total"] = number_or_null(p.records_total);
  return j;
}

std::string age(const std::optional<std::string>& ms, std::int64_t now) {
  const auto t = number(ms);
  return t ? time_ago(*t, now) : "-";
}

std::vector<std::string> device_row(const listed_device& d, std::int64_t now) {
  const auto& p = d.projection;
  const auto lat = degrees(p.lat);
  const auto lon = degrees(p.lon);
  const auto since = records_since_connect(p);
  return {terminal_safe(d.imei),
          terminal_safe(d.owner) + (d.owner_alive ? "" : " (no heartbeat)"),
          age(p.connected_ms, now),
          age(p.last_seen_ms, now),
          lat ? degrees_text(*lat) : "-",
          lon ? degrees_text(*lon) : "-",
          p.speed ? terminal_safe(*p.speed) + " km/h" : "-",
          p.satellites ? terminal_safe(*p.satellites) : "-",
          since ? std::to_string(*since) : "-"};
}

int run_list(const devices_settings& s, redis_reader& r) {
  std::string error;
  const auto now = redis::server_time_ms(*r.conn, error);
  std::optional<std::vector<listed_device>> all;
  if (now)
    all = r.shards ? telemetry::list_registered_devices(*r.conn, *r.shards, error)
                   : std::vector<listed_device>{};
  if (!now || !all) {
    std::cerr << "tgw devices: " << error << '\n';
    return 1;
  }
  const std::size_t registered = all->size();
  const std::int64_t silent_ms = s.silent_for.empty() ? -1 : parse_duration(s.silent_for)->count();
  std::erase_if(*all, [&](const listed_device& d) {
    if (!s.instance.empty() && d.owner != s.instance) return true;
    if (silent_ms < 0) return false;
    // No packet known at all is as silent as a device can be.
    const auto seen = number(d.projection.last_seen_ms);
    return seen && *now - *seen < silent_ms;
  });
  if (s.json) {
    json list = json::array();
    for (const listed_device& d : *all) list.push_back(device_json(d));
    std::cout << json_text({{"at_ms", *now}, {"devices", list}}) << '\n';
    return 0;
  }
  text_table table(
      {"IMEI", "INSTANCE", "CONNECTED", "LAST PACKET", "LAT", "LON", "SPEED", "SATS", "RECORDS"});
  std::set<std::string> instances;
  for (const listed_device& d : *all) {
    table.add(device_row(d, *now));
    instances.insert(d.owner);
  }
  if (!all->empty()) table.print(std::cout);
  const bool filtered = all->size() != registered || !s.instance.empty() || silent_ms >= 0;
  std::cout << all->size();
  if (filtered) std::cout << " of " << registered;
  std::cout << (filtered ? " connected device" : " device")
            << (filtered ? (registered == 1 ? "" : "s") : (all->size() == 1 ? "" : "s"))
            << (filtered ? " match" : " connected") << ", on " << instances.size() << " instance"
            << (instances.size() == 1 ? "" : "s") << " (at " << utc_time(*now)
            << "; RECORDS: sent since connecting)\n";
  return 0;
}

void print_device(const listed_device& d, const std::string& key, std::int64_t now) {
  const auto& p = d.projection;
  auto when = [&](const std::optional<std::string>& ms) {
    const auto t = number(ms);
    return t ? time_and_age(*t, now) : std::string("-");
  };
  std::cout << "device " << terminal_safe(d.imei) << '\n';
  text_table t({"  registry", d.owner.empty()
                                  ? "not registered (no TCP connection held by any instance)"
                                  : "held by " + terminal_safe(d.owner) +
                                        (d.owner_alive ? "" : " (its heartbeat is gone)")});
  t.add({"  online", p.online ? (*p.online == "1" ? "yes" : "no") : "-"});
  t.add({"  connected", when(p.connected_ms)});
  t.add({"  last packet", when(p.last_seen_ms)});
  const auto lat = degrees(p.lat);
  const auto lon = degrees(p.lon);
  if (lat && lon) {
    t.add({"  position", degrees_text(*lat) + ", " + degrees_text(*lon) + ", " +
                             (p.speed ? terminal_safe(*p.speed) : "-") + " km/h, " +
                             (p.satellites ? terminal_safe(*p.satellites) : "-") + " satellites"});
    const auto ts = position_ts(p);
    t.add({"  position time", ts ? record_time_text(*ts, now) : "-"});
  } else {
    t.add({"  position", "-"});
  }
  const auto since = records_since_connect(p);
  t.add({"  records", (since ? std::to_string(*since) + " since connecting, " : std::string()) +
                          (p.records_total ? std::to_string(*p.records_total) : "0") + " in all"});
  t.print(std::cout);
  std::cout << "projection " << terminal_safe(key) << (d.has_projection ? "" : ": none") << '\n';
  text_table fields({});
  for (const auto& [name, value] : telemetry::render(p)) {
    std::string shown = terminal_safe(value);
    if (name == "last_ts") {
      if (const auto ts = number<std::uint64_t>(value)) shown += "  " + record_time_text(*ts, now);
    } else if (name.ends_with("_ms")) {
      if (const auto t_ms = number(value)) shown += "  " + time_and_age(*t_ms, now);
    }
    fields.add({"  " + name, shown});
  }
  fields.print(std::cout);
}

void print_events(const std::vector<redis::stream_entry>& events, const std::string& key,
                  std::int64_t now) {
  std::cout << "journal " << terminal_safe(key) << ", the latest " << events.size() << " event"
            << (events.size() == 1 ? "" : "s") << ":\n";
  text_table t({});
  for (const redis::stream_entry& e : events) {
    std::string rest;
    for (const auto& [k, v] : e.fields)
      if (k != "type" && k != "at_ms" && k != "instance")
        rest += (rest.empty() ? "" : " ") + terminal_safe(k) + "=" + terminal_safe(v);
    const std::int64_t at = number(e.get("at_ms")).value_or(redis::stream_id_ms(e.id));
    t.add({"  " + time_and_age(at, now), terminal_safe(e.get("instance")),
           terminal_safe(e.get("type")), rest});
  }
  t.print(std::cout);
}

int run_one(const devices_settings& s, redis_reader& r) {
  std::string error;
  const auto now = redis::server_time_ms(*r.conn, error);
  const redis::key_shards shards = r.shards.value_or(redis::key_shards{});
  const std::string& prefix = shards.prefix_of(s.imei);
  const std::string device_key = telemetry::keys::device(s.imei, prefix);
  const std::string journal_key = telemetry::keys::journal(s.imei, prefix);
  std::optional<listed_device> d;
  std::optional<std::vector<redis::stream_entry>> events;
  std::optional<std::vector<commands::command_record>> open;
  if (now && r.shards) {
    d = telemetry::read_listed_device(*r.conn, shards, s.imei, error);
    if (d) events = redis::newest_entries(*r.conn, journal_key, s.events, error);
    if (events) open = commands::read_open_commands(*r.conn, shards, s.imei, error);
  } else if (now) {
    d = listed_device{s.imei, {}, false, false, {}};
    events.emplace();
    open.emplace();
  }
  if (!open) {
    std::cerr << "tgw devices: " << error << '\n';
    return 1;
  }
  if (d->owner.empty() && !d->has_projection && events->empty() && open->empty()) {
    std::cerr << "tgw devices: nothing is known of device " << s.imei
              << " (no registry entry, projection, journal or command)\n";
    return 1;
  }
  if (s.json) {
    json out = device_json(*d);
    json projection = json::object();
    for (const auto& [k, v] : telemetry::render(d->projection)) projection[k] = v;
    out["projection"] = projection;
    json journal = json::array();
    for (const redis::stream_entry& e : *events) {
      json ev = {{"id", e.id}};
      for (const auto& [k, v] : e.fields) ev[k] = v;
      journal.push_back(ev);
    }
    out["journal"] = journal;
    json commands = json::array();
    for (const auto& c : *open) commands.push_back(command_json(c));
    out["open_commands"] = commands;
    out["at_ms"] = *now;
    std::cout << json_text(out) << '\n';
    return 0;
  }
  print_device(*d, device_key, *now);
  print_events(*events, journal_key, *now);
  std::cout << "open commands (queued, sent or waiting for the device's answer): " << open->size()
            << '\n';
  if (!open->empty()) command_table(*open, *now).print(std::cout);
  return 0;
}

}  // namespace

void add_devices_command(CLI::App& app, int& exit_code) {
  auto s = std::make_shared<devices_settings>();
  CLI::App* cmd = app.add_subcommand(
      "devices",
      "The devices connected now, on every instance and key shard: instance, when they\n"
      "connected, their last packet and position, records since connecting. With --imei\n"
      "one device in full: its projection, latest journal events and open commands.");
  add_redis_options(cmd, s->redis);
  auto* imei = cmd->add_option("--imei", s->imei,
                               "Show this device in full (15 or 16 digits), connected or not")
                   ->envname("TGW_DEVICES_IMEI")
                   ->check(device_imei_check());
  auto* instance = cmd->add_option("--instance", s->instance, "Only the devices of this instance")
                       ->envname("TGW_DEVICES_INSTANCE")
                       ->check(CLI::Validator(
                           [](std::string& text) {
                             return text.empty() ? "an instance id is not empty" : std::string();
                           },
                           "ID"));
  auto* silent =
      cmd->add_option("--silent-for", s->silent_for,
                      "Only the devices connected but silent (no packet) for at least this long: "
                      "30s, 5m, 1h")
          ->envname("TGW_DEVICES_SILENT_FOR")
          ->check(duration_check());
  imei->excludes(instance)->excludes(silent);
  cmd->add_option("--events", s->events, "With --imei: how many of its latest journal events")
      ->envname("TGW_DEVICES_EVENTS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000}))
      ->capture_default_str();
  cmd->add_flag("--json", s->json,
                "One line of JSON with raw values (Redis' times in ms since the epoch; a record's "
                "time as a decimal string and ISO 8601)")
      ->envname("TGW_DEVICES_JSON");
  cmd->callback([s, &exit_code] {
    auto reader = open_redis_reader(s->redis, "devices", exit_code);
    if (!reader) return;
    exit_code = s->imei.empty() ? run_list(*s, *reader) : run_one(*s, *reader);
  });
}

}  // namespace tgw::infra
