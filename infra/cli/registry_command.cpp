#include "infra/cli/registry_command.hpp"

#include <iostream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "infra/cli/redis_choice.hpp"
#include "infra/cli/value_checks.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/registry/redis_registry_store.hpp"
#include "infra/registry/registry_keys.hpp"

namespace tgw::infra {
namespace {

struct registry_settings {
  redis_choice redis;
  std::string imei;
  bool once = false;
  std::string mode = "reverse-index";
  bool json = false;
};

int run_registry(const registry_settings& s) {
  std::string error;
  bool usage = false;
  const auto where = resolve_redis(s.redis, error, usage);
  if (!where) {
    std::cerr << "tgw registry: " << error << '\n';
    return usage ? 2 : 1;
  }
  const redis::connection::options options{*where, std::chrono::milliseconds{2000},
                                           std::chrono::milliseconds{30000}, "tgw-registry"};
  redis::connection conn(options);
  if (!conn.ensure_connected(error)) {
    std::cerr << "tgw registry: " << error << '\n';
    return 1;
  }
  // On a cluster: the shards the gateways split keys into. None stored yet: no
  // gateway has registered anything, and the registry is empty.
  bool none_stored = false;
  auto shards = redis::read_key_shards(conn, error, &none_stored);
  if (!shards && !none_stored) {
    std::cerr << "tgw registry: " << error << '\n';
    return 1;
  }
  std::vector<std::string> prefixes;
  for (std::uint32_t i = 0; shards && i < shards->count(); ++i)
    prefixes.push_back(shards->prefix(i));
  auto alive = [&](const std::string& instance, const std::string& prefix) {
    return conn.command({"EXISTS", registry::keys::heartbeat(instance, prefix)}).integer == 1;
  };
  nlohmann::ordered_json out;

  if (!s.imei.empty()) {
    const std::string prefix = shards ? shards->prefix_of(s.imei) : std::string();
    const redis::value owner = conn.command({"HGET", registry::keys::registry_in(prefix), s.imei});
    out["imei"] = s.imei;
    out["owner"] = owner.is_nil() ? nullptr : nlohmann::ordered_json(owner.text);
    out["owner_alive"] = !owner.is_nil() && alive(owner.text, prefix);
  } else if (s.once) {
    if (!shards) {
      std::cerr << "tgw registry: " << error << '\n';
      return 1;
    }
    registry::redis_registry_store store(options, "tgw-registry-cli", *shards);
    const auto mode =
        s.mode == "scan" ? ports::janitor_mode::scan : ports::janitor_mode::reverse_index;
    ports::store_failure failed;
    const auto report = store.janitor_pass(mode, 1000, failed);
    if (!report) {
      std::cerr << "tgw registry: janitor pass failed: " << failed.text() << '\n';
      return 1;
    }
    out["instances_checked"] = report->instances_checked;
    out["dead"] = report->dead;
    out["evicted"] = report->evicted;
  } else {
    // Counts per owner from one HSCAN of the registry (of each shard's, on a cluster).
    // An owner is alive where its heartbeat is: a shard that lost it judges it dead.
    std::map<std::string, std::uint64_t> per_owner;
    std::map<std::string, std::uint64_t> dead_per_owner;
    for (const std::string& prefix : prefixes) {
      std::map<std::string, std::uint64_t> in_shard;
      std::string cursor = "0";
      do {
        const redis::value page =
            conn.command({"HSCAN", registry::keys::registry_in(prefix), cursor, "COUNT", "1000"});
        if (page.is_error()) {
          std::cerr << "tgw registry: " << page.text << '\n';
          return 1;
        }
        cursor = page.elements.at(0).text;
        const auto& kv = page.elements.at(1).elements;
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2) ++in_shard[kv[i + 1].text];
      } while (cursor != "0");
      for (const auto& [owner, count] : in_shard) {
        per_owner[owner] += count;
        if (!alive(owner, prefix)) dead_per_owner[owner] += count;
      }
    }
    nlohmann::ordered_json instances = nlohmann::ordered_json::array();
    std::uint64_t dead_entries = 0;
    for (const auto& [owner, count] : per_owner) {
      const auto dead = dead_per_owner.find(owner);
      const bool live = dead == dead_per_owner.end();
      if (!live) dead_entries += dead->second;
      instances.push_back({{"instance", owner}, {"entries", count}, {"alive", live}});
    }
    out["instances"] = instances;
    out["entries_of_dead_owners"] = dead_entries;
  }
  if (s.json) {
    std::cout << out.dump() << '\n';
  } else {
    std::cout << out.dump(2) << '\n';
  }
  return 0;
}

}  // namespace

void add_registry_command(CLI::App& app, int& exit_code) {
  auto s = std::make_shared<registry_settings>();
  CLI::App* cmd = app.add_subcommand(
      "registry",
      "Inspect the connection registry: with --imei one device's owner and whether it is\n"
      "alive; by default entries per instance with liveness and the entries of dead\n"
      "owners; with --once run one janitor pass and report what it evicted.");
  add_redis_options(cmd, s->redis);
  cmd->add_option("--imei", s->imei, "Show this device's owner (15 or 16 digits)")
      ->envname("TGW_REGISTRY_IMEI")
      ->check(device_imei_check());
  cmd->add_flag("--once", s->once, "Run one janitor pass")->envname("TGW_REGISTRY_ONCE");
  cmd->add_option("--janitor-mode", s->mode, "reverse-index or scan (with --once)")
      ->envname("TGW_REGISTRY_JANITOR_MODE")
      ->check(CLI::IsMember({"reverse-index", "scan"}))
      ->capture_default_str();
  cmd->add_flag("--json", s->json, "One line of JSON instead of indented JSON")
      ->envname("TGW_REGISTRY_JSON");
  cmd->callback([s, &exit_code] { exit_code = run_registry(*s); });
}

}  // namespace tgw::infra
