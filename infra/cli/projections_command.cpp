#include "infra/cli/projections_command.hpp"

#include <charconv>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "infra/cli/redis_choice.hpp"
#include "infra/log/log.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/telemetry/projection_rebuilder.hpp"
#include "infra/text/human_time.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra {
namespace {

struct projections_settings {
  redis_choice redis;
  std::string imei;
  bool dry_run = false;
  bool json = false;
  std::string log_level = "warn";
  std::string log_format = "text";
};

nlohmann::ordered_json optional_text(const std::optional<std::string>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// A field's value as stored, and a time field's as a UTC time too, so that a person
// sees which of two times is the later one.
std::string shown(const std::string& field, const std::optional<std::string>& v) {
  if (!v) return "(none)";
  std::int64_t ms = 0;
  const bool time = field.ends_with("_ms") || field == "last_ts";
  if (!time || std::from_chars(v->data(), v->data() + v->size(), ms).ptr != v->data() + v->size())
    return terminal_safe(*v);
  return *v + " (" + utc_time(ms) + ")";
}

void print(const telemetry::rebuild_report& r, bool dry_run, bool json) {
  if (json) {
    nlohmann::ordered_json out;
    out["dry_run"] = dry_run;
    out["devices"] = r.devices;
    out["events_read"] = r.events_read;
    out["projections_written"] = r.projections_written;
    out["differences"] = r.differences;
    out["retries"] = r.retries;
    nlohmann::ordered_json differing = nlohmann::ordered_json::array();
    for (const auto& d : r.differing) {
      nlohmann::ordered_json fields = nlohmann::ordered_json::array();
      for (const auto& f : d.fields)
        fields.push_back({{"field", f.field},
                          {"current", optional_text(f.current)},
                          {"rebuilt", optional_text(f.rebuilt)}});
      differing.push_back({{"imei", d.imei}, {"fields", fields}});
    }
    out["differing"] = differing;
    std::cout << out.dump() << '\n';
    return;
  }
  for (const auto& d : r.differing)
    for (const auto& f : d.fields)
      std::cout << "device:" << d.imei << ' ' << f.field << ": " << shown(f.field, f.current)
                << " -> " << shown(f.field, f.rebuilt) << '\n';
  std::cout << "projections " << (dry_run ? "dry run" : "rebuilt") << ": " << r.devices
            << " devices, " << r.events_read << " events read, " << r.projections_written
            << " projections written, " << r.differences << " differences found ("
            << r.differing.size() << " devices)\n";
}

constexpr int exit_differences = 3;

int run_rebuild(const projections_settings& s) {
  std::string error;
  bool usage = false;
  const auto where = resolve_redis(s.redis, error, usage);
  if (!where) {
    std::cerr << "tgw projections rebuild: " << error << '\n';
    return usage ? 2 : 1;
  }
  const redis::connection::options options{*where, std::chrono::milliseconds{2000},
                                           std::chrono::milliseconds{30000}, "tgw-projections"};
  // On a cluster, the key shards the gateways agreed on. None stored: nothing to rebuild.
  redis::connection probe(options);
  bool none_stored = false;
  auto shards = redis::read_key_shards(probe, error, &none_stored);
  if (!shards && !none_stored) {
    std::cerr << "tgw projections rebuild: " << error << '\n';
    return 1;
  }
  telemetry::projection_rebuilder rebuilder(options, shards ? *shards : redis::key_shards{});
  telemetry::rebuild_settings settings;
  settings.imei = s.imei;
  settings.dry_run = s.dry_run;
  // Progress on stderr, at most once a second, so stdout stays the result.
  auto last = std::chrono::steady_clock::now();
  settings.progress = [&last](const telemetry::rebuild_report& r) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds{1}) return;
    last = now;
    std::cerr << "projections: " << r.devices << " devices, " << r.events_read << " events, "
              << r.differences << " differences so far\n";
  };
  const auto report = rebuilder.run(settings, error);
  if (!report) {
    std::cerr << "tgw projections rebuild: " << error << '\n';
    return 1;
  }
  print(*report, s.dry_run, s.json);
  // A check: a dry run that found differences fails, so scripts and CI can use it.
  return s.dry_run && report->differences > 0 ? exit_differences : 0;
}

}  // namespace

void add_projections_command(CLI::App& app, int& exit_code) {
  auto s = std::make_shared<projections_settings>();
  CLI::App* cmd = app.add_subcommand(
      "projections", "Maintain the read models that are projections of the device journals.");
  cmd->require_subcommand(1);
  CLI::App* rebuild = cmd->add_subcommand(
      "rebuild",
      "Rebuild device:{imei} from journal:{imei} alone, for one device or every device\n"
      "with a journal. A live update during the rebuild makes that device fold again, so\n"
      "none is lost. With --dry-run only report where the stored projections differ.\n"
      "Exit code: 0 done (or, with --dry-run, no difference); 1 Redis unreachable or a\n"
      "failure; 2 usage error; 3 --dry-run found differences.");
  add_redis_options(rebuild, s->redis);
  rebuild->add_option("--imei", s->imei, "Only this device")->envname("TGW_PROJECTIONS_IMEI");
  rebuild->add_flag("--dry-run", s->dry_run, "Report differences; write nothing")
      ->envname("TGW_PROJECTIONS_DRY_RUN");
  rebuild->add_flag("--json", s->json, "One line of JSON instead of text")
      ->envname("TGW_PROJECTIONS_JSON");
  rebuild
      ->add_option("--log-level", s->log_level, "trace, debug, info, warn, error, critical or off")
      ->envname("TGW_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  rebuild->add_option("--log-format", s->log_format, "text or json")
      ->envname("TGW_LOG_FORMAT")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  rebuild->callback([s, &exit_code] {
    setup_logging(s->log_level, s->log_format);
    exit_code = run_rebuild(*s);
  });
}

}  // namespace tgw::infra
