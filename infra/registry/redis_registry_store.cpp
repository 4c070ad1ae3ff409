#include "infra/registry/redis_registry_store.hpp"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "infra/redis/failure_cause.hpp"
#include "infra/registry/heartbeat_holder.hpp"
#include "infra/registry/registry_keys.hpp"
#include "infra/registry/registry_library.hpp"

namespace tgw::infra::registry {
namespace {

// A Redis error reply as the port's failure; an ACL refusal inside a Function names
// the command of its line in the library.
bool failed(const redis::value& v, ports::store_failure& error) {
  if (!v.is_error()) return false;
  error = redis::store_failure_of(v.failure, v.text, registry_library_source());
  return true;
}

}  // namespace

redis_registry_store::redis_registry_store(redis::connection::options where,
                                           std::string instance_id, redis::key_shards shards,
                                           std::string holder)
    : conn_(std::move(where)),
      library_(conn_, registry_library_source()),
      instance_(std::move(instance_id)),
      shards_(std::move(shards)),
      holder_(holder.empty() ? heartbeat_holder::of_this_process(std::chrono::seconds{30}).value()
                             : std::move(holder)) {}

bool redis_registry_store::load_library(std::string& error) {
  return library_.load(error);
}

redis::value redis_registry_store::call(const std::vector<std::string>& argv) {
  return library_.call(argv);
}

bool redis_registry_store::register_device(const std::string& imei, ports::store_failure& error) {
  return claim(imei, claim_mode::take, error).has_value();
}

std::optional<bool> redis_registry_store::claim(const std::string& imei, claim_mode mode,
                                                ports::store_failure& error) {
  // Compare-and-set on the owner, so the previous owner's reverse index (and, to
  // re-assert, its heartbeat) can be named in KEYS: read the owner, then write if it
  // is still that one.
  const std::string& prefix = shards_.prefix_of(imei);
  const std::string registry = keys::registry_in(prefix);
  std::string expected;
  {
    const redis::value owner = call({"HGET", registry, imei});
    if (failed(owner, error)) return std::nullopt;
    expected = owner.is_nil() ? "" : owner.text;
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string& previous = expected.empty() ? instance_ : expected;
    const redis::value v =
        mode == claim_mode::take
            ? call({"FCALL", "tgw_registry_register", "3", registry,
                    keys::devices(instance_, prefix), keys::devices(previous, prefix), imei,
                    instance_, expected})
            : call({"FCALL", "tgw_registry_reassert", "4", registry,
                    keys::devices(instance_, prefix), keys::devices(previous, prefix),
                    keys::heartbeat(previous, prefix), imei, instance_, expected});
    if (failed(v, error)) return std::nullopt;
    const auto outcome = v.is_array() && v.elements.size() == 2 ? v.elements[0].as_int() : 0;
    if (outcome == 1) return true;
    if (outcome == 2) return false;  // a live instance holds it
    expected = v.is_array() && v.elements.size() == 2 ? v.elements[1].text : "";
  }
  error =
      redis::store_failure_of_text("registration of " + imei + " kept racing with other instances");
  return std::nullopt;
}

bool redis_registry_store::unregister_device(const std::string& imei, ports::store_failure& error) {
  const std::string& prefix = shards_.prefix_of(imei);
  const redis::value v = call({"FCALL", "tgw_registry_unregister", "2", keys::registry_in(prefix),
                               keys::devices(instance_, prefix), imei, instance_});
  return !failed(v, error);
}

std::optional<std::size_t> redis_registry_store::unregister_all(
    const std::vector<std::string>& imeis, ports::store_failure& error) {
  if (imeis.empty()) return 0;
  std::vector<std::vector<std::string>> commands;
  commands.reserve(imeis.size());
  for (const std::string& imei : imeis) {
    const std::string& prefix = shards_.prefix_of(imei);
    commands.push_back({"FCALL", "tgw_registry_unregister", "2", keys::registry_in(prefix),
                        keys::devices(instance_, prefix), imei, instance_});
  }
  std::size_t deleted = 0;
  for (const redis::value& v :
       library_.run(commands.size(), [&] { return conn_.pipeline(commands); })) {
    if (failed(v, error)) return std::nullopt;
    deleted += static_cast<std::size_t>(v.as_int().value_or(0));
  }
  return deleted;
}

std::optional<std::size_t> redis_registry_store::reassert(const std::vector<std::string>& imeis,
                                                          ports::store_failure& error) {
  std::size_t left = 0;
  for (const std::string& imei : imeis) {
    const auto set = claim(imei, claim_mode::reassert, error);
    if (!set) return std::nullopt;
    if (!*set) ++left;
  }
  return left;
}

std::optional<std::vector<std::string>> redis_registry_store::missing_from_index(
    const std::vector<std::string>& imeis, ports::store_failure& error) {
  constexpr std::size_t chunk = 1000;  // SMISMEMBER arguments per call
  // Each shard's devices are checked against that shard's reverse index.
  std::vector<std::vector<std::string>> by_shard(shards_.count());
  for (const std::string& imei : imeis) by_shard[shards_.shard_of(imei)].push_back(imei);
  std::vector<std::string> missing;
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    const std::vector<std::string>& of_shard = by_shard[shard];
    for (std::size_t first = 0; first < of_shard.size(); first += chunk) {
      const std::size_t last = std::min(of_shard.size(), first + chunk);
      std::vector<std::string> argv{"SMISMEMBER", keys::devices(instance_, shards_.prefix(shard))};
      argv.insert(argv.end(), of_shard.begin() + static_cast<std::ptrdiff_t>(first),
                  of_shard.begin() + static_cast<std::ptrdiff_t>(last));
      const redis::value v = call(argv);
      if (failed(v, error)) return std::nullopt;
      if (!v.is_array() || v.elements.size() != last - first) {
        error = redis::store_failure_of_text("unexpected reply to SMISMEMBER");
        return std::nullopt;
      }
      for (std::size_t i = first; i < last; ++i)
        if (v.elements[i - first].as_int().value_or(0) == 0) missing.push_back(of_shard[i]);
    }
  }
  return missing;
}

std::optional<heartbeat_outcome> redis_registry_store::heartbeat(std::chrono::seconds ttl,
                                                                 ports::store_failure& error) {
  heartbeat_outcome out;
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    const std::string& prefix = shards_.prefix(shard);
    const redis::value v =
        call({"FCALL", "tgw_registry_heartbeat", "2", keys::heartbeat(instance_, prefix),
              keys::known_instances_in(prefix), instance_, std::to_string(ttl.count()), holder_});
    if (failed(v, error)) return std::nullopt;
    if (!v.is_array() || v.elements.size() != 2) {
      error = redis::store_failure_of_text("tgw_registry_heartbeat: unexpected reply");
      return std::nullopt;
    }
    const auto state = v.elements[0].as_int().value_or(0);
    if (state == 2) {
      out.taken_by = v.elements[1].text;
      const auto who = heartbeat_holder::parse(out.taken_by);
      out.taken_by_described =
          who ? who->describe() : "a process that wrote '" + out.taken_by + "'";
      return out;
    }
    out.was_missing = out.was_missing || state == 1;
  }
  return out;
}

std::optional<bool> redis_registry_store::release_heartbeat(ports::store_failure& error) {
  bool released = true;
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    const redis::value v = call({"FCALL", "tgw_registry_release", "1",
                                 keys::heartbeat(instance_, shards_.prefix(shard)), holder_});
    if (failed(v, error)) return std::nullopt;
    released = released && v.as_int().value_or(0) == 1;
  }
  return released;
}

std::optional<std::uint64_t> redis_registry_store::evict_instance(const std::string& prefix,
                                                                  const std::string& dead,
                                                                  std::size_t batch,
                                                                  ports::store_failure& error) {
  std::uint64_t evicted = 0;
  std::string cursor = "0";
  do {
    const redis::value page =
        call({"SSCAN", keys::devices(dead, prefix), cursor, "COUNT", std::to_string(batch)});
    if (failed(page, error)) return std::nullopt;
    if (!page.is_array() || page.elements.size() != 2) break;
    cursor = page.elements[0].text;
    std::vector<std::string> argv = {"FCALL",
                                     "tgw_registry_evict",
                                     "2",
                                     keys::registry_in(prefix),
                                     keys::heartbeat(dead, prefix),
                                     dead};
    for (const redis::value& imei : page.elements[1].elements) argv.push_back(imei.text);
    if (argv.size() > 6) {
      const redis::value n = call(argv);
      if (failed(n, error)) return std::nullopt;
      evicted += static_cast<std::uint64_t>(n.as_int().value_or(0));
    }
  } while (cursor != "0");
  const redis::value forgot =
      call({"FCALL", "tgw_registry_forget_instance", "3", keys::devices(dead, prefix),
            keys::known_instances_in(prefix), keys::heartbeat(dead, prefix), dead});
  if (failed(forgot, error)) return std::nullopt;
  return evicted;
}

bool redis_registry_store::scan_pass(const std::string& prefix, std::size_t batch,
                                     janitor_report& report, ports::store_failure& error) {
  const std::string registry = keys::registry_in(prefix);
  std::unordered_map<std::string, bool> alive;  // owner -> heartbeat present
  std::string cursor = "0";
  do {
    const redis::value page = call({"HSCAN", registry, cursor, "COUNT", std::to_string(batch)});
    if (failed(page, error)) return false;
    if (!page.is_array() || page.elements.size() != 2) break;
    cursor = page.elements[0].text;
    std::unordered_map<std::string, std::vector<std::string>> by_owner;
    const auto& kv = page.elements[1].elements;
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
      const std::string& owner = kv[i + 1].text;
      auto it = alive.find(owner);
      if (it == alive.end()) {
        const redis::value e = call({"EXISTS", keys::heartbeat(owner, prefix)});
        if (failed(e, error)) return false;
        it = alive.emplace(owner, e.integer == 1).first;
        checked_.insert(owner);
        if (!it->second) report.dead.push_back(owner);
      }
      if (!it->second) by_owner[owner].push_back(kv[i].text);
    }
    for (auto& [owner, imeis] : by_owner) {
      std::vector<std::string> argv = {"FCALL",  "tgw_registry_evict",           "2",
                                       registry, keys::heartbeat(owner, prefix), owner};
      argv.insert(argv.end(), imeis.begin(), imeis.end());
      const redis::value n = call(argv);
      if (failed(n, error)) return false;
      report.evicted += static_cast<std::uint64_t>(n.as_int().value_or(0));
    }
  } while (cursor != "0");
  return true;
}

bool redis_registry_store::index_pass(const std::string& prefix, std::size_t batch,
                                      janitor_report& report, ports::store_failure& error) {
  const redis::value known = call({"SMEMBERS", keys::known_instances_in(prefix)});
  if (failed(known, error)) return false;
  for (const redis::value& id : known.elements) {
    checked_.insert(id.text);
    const redis::value e = call({"EXISTS", keys::heartbeat(id.text, prefix)});
    if (failed(e, error)) return false;
    if (e.integer == 1) continue;
    report.dead.push_back(id.text);
    const auto n = evict_instance(prefix, id.text, batch, error);
    if (!n) return false;
    report.evicted += *n;
  }
  return true;
}

std::optional<janitor_report> redis_registry_store::janitor_pass(janitor_mode mode,
                                                                 std::size_t batch,
                                                                 ports::store_failure& error) {
  // Shard by shard: an instance is judged dead against the heartbeat of the shard
  // whose entries are evicted, in the call that evicts them.
  janitor_report report;
  checked_.clear();
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    const std::string& prefix = shards_.prefix(shard);
    const bool done = mode == janitor_mode::scan ? scan_pass(prefix, batch, report, error)
                                                 : index_pass(prefix, batch, report, error);
    if (!done) return std::nullopt;
  }
  report.instances_checked = checked_.size();
  if (shards_.count() > 1) {
    // An instance dead in several shards is one dead instance.
    std::sort(report.dead.begin(), report.dead.end());
    report.dead.erase(std::unique(report.dead.begin(), report.dead.end()), report.dead.end());
  }
  return report;
}

}  // namespace tgw::infra::registry
