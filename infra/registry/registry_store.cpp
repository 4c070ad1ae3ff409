#include "infra/registry/registry_store.hpp"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "infra/registry/registry_library.hpp"

namespace tgw::infra::registry {
namespace {

bool failed(const redis::value& v, std::string& error) {
  if (!v.is_error()) return false;
  error = v.text;
  return true;
}

}  // namespace

registry_store::registry_store(redis::connection::options where, std::string instance_id)
    : conn_(std::move(where)), instance_(std::move(instance_id)) {}

bool registry_store::load_library(std::string& error) {
  const redis::value v =
      conn_.command({"FUNCTION", "LOAD", "REPLACE", std::string(registry_library_source())});
  loaded_ = !failed(v, error);
  return loaded_;
}

redis::value registry_store::call(const std::vector<std::string>& argv) {
  std::string error;
  if ((!conn_.connected() || !loaded_) && !load_library(error))
    return redis::value::make_error(error);
  redis::value v = conn_.command(argv);
  if (redis::error_is(v, "ERR Function not found") && load_library(error)) v = conn_.command(argv);
  if (!conn_.connected()) loaded_ = false;
  return v;
}

bool registry_store::register_device(const std::string& imei, std::string& error) {
  return claim(imei, claim_mode::take, error).has_value();
}

std::optional<bool> registry_store::claim(const std::string& imei, claim_mode mode,
                                          std::string& error) {
  // Compare-and-set on the owner, so the previous owner's reverse index (and, to
  // re-assert, its heartbeat) can be named in KEYS: read the owner, then write if it
  // is still that one.
  std::string expected;
  {
    const redis::value owner = call({"HGET", keys::registry, imei});
    if (failed(owner, error)) return std::nullopt;
    expected = owner.is_nil() ? "" : owner.text;
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string& previous = expected.empty() ? instance_ : expected;
    const redis::value v =
        mode == claim_mode::take
            ? call({"FCALL", "tgw_registry_register", "3", keys::registry, keys::devices(instance_),
                    keys::devices(previous), imei, instance_, expected})
            : call({"FCALL", "tgw_registry_reassert", "4", keys::registry, keys::devices(instance_),
                    keys::devices(previous), keys::heartbeat(previous), imei, instance_, expected});
    if (failed(v, error)) return std::nullopt;
    const auto outcome = v.is_array() && v.elements.size() == 2 ? v.elements[0].as_int() : 0;
    if (outcome == 1) return true;
    if (outcome == 2) return false;  // a live instance holds it
    expected = v.is_array() && v.elements.size() == 2 ? v.elements[1].text : "";
  }
  error = "registration of " + imei + " kept racing with other instances";
  return std::nullopt;
}

bool registry_store::unregister_device(const std::string& imei, std::string& error) {
  const redis::value v = call({"FCALL", "tgw_registry_unregister", "2", keys::registry,
                               keys::devices(instance_), imei, instance_});
  return !failed(v, error);
}

std::optional<std::size_t> registry_store::unregister_all(const std::vector<std::string>& imeis,
                                                          std::string& error) {
  if (imeis.empty()) return 0;
  if (!loaded_ && !load_library(error)) return std::nullopt;
  std::vector<std::vector<std::string>> commands;
  commands.reserve(imeis.size());
  for (const std::string& imei : imeis)
    commands.push_back({"FCALL", "tgw_registry_unregister", "2", keys::registry,
                        keys::devices(instance_), imei, instance_});
  std::size_t deleted = 0;
  for (const redis::value& v : conn_.pipeline(commands)) {
    if (failed(v, error)) return std::nullopt;
    deleted += static_cast<std::size_t>(v.as_int().value_or(0));
  }
  return deleted;
}

std::optional<std::size_t> registry_store::reassert(const std::vector<std::string>& imeis,
                                                    std::string& error) {
  std::size_t left = 0;
  for (const std::string& imei : imeis) {
    const auto set = claim(imei, claim_mode::reassert, error);
    if (!set) return std::nullopt;
    if (!*set) ++left;
  }
  return left;
}

std::optional<std::vector<std::string>> registry_store::missing_from_index(
    const std::vector<std::string>& imeis, std::string& error) {
  constexpr std::size_t chunk = 1000;  // SMISMEMBER arguments per call
  std::vector<std::string> missing;
  for (std::size_t first = 0; first < imeis.size(); first += chunk) {
    const std::size_t last = std::min(imeis.size(), first + chunk);
    std::vector<std::string> argv{"SMISMEMBER", keys::devices(instance_)};
    argv.insert(argv.end(), imeis.begin() + static_cast<std::ptrdiff_t>(first),
                imeis.begin() + static_cast<std::ptrdiff_t>(last));
    const redis::value v = call(argv);
    if (failed(v, error)) return std::nullopt;
    if (!v.is_array() || v.elements.size() != last - first) {
      error = "unexpected reply to SMISMEMBER";
      return std::nullopt;
    }
    for (std::size_t i = first; i < last; ++i)
      if (v.elements[i - first].as_int().value_or(0) == 0) missing.push_back(imeis[i]);
  }
  return missing;
}

std::optional<bool> registry_store::heartbeat(std::chrono::seconds ttl, std::string& error) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const redis::value v =
      call({"FCALL", "tgw_registry_heartbeat", "2", keys::heartbeat(instance_),
            keys::known_instances, instance_, std::to_string(ttl.count()), std::to_string(now)});
  if (failed(v, error)) return std::nullopt;
  return v.as_int().value_or(0) == 1;
}

std::optional<std::uint64_t> registry_store::evict_instance(const std::string& dead,
                                                            std::size_t batch, std::string& error) {
  std::uint64_t evicted = 0;
  std::string cursor = "0";
  do {
    const redis::value page =
        call({"SSCAN", keys::devices(dead), cursor, "COUNT", std::to_string(batch)});
    if (failed(page, error)) return std::nullopt;
    if (!page.is_array() || page.elements.size() != 2) break;
    cursor = page.elements[0].text;
    std::vector<std::string> argv = {"FCALL",        "tgw_registry_evict",  "2",
                                     keys::registry, keys::heartbeat(dead), dead};
    for (const redis::value& imei : page.elements[1].elements) argv.push_back(imei.text);
    if (argv.size() > 6) {
      const redis::value n = call(argv);
      if (failed(n, error)) return std::nullopt;
      evicted += static_cast<std::uint64_t>(n.as_int().value_or(0));
    }
  } while (cursor != "0");
  const redis::value forgot =
      call({"FCALL", "tgw_registry_forget_instance", "3", keys::devices(dead),
            keys::known_instances, keys::heartbeat(dead), dead});
  if (failed(forgot, error)) return std::nullopt;
  return evicted;
}

std::optional<janitor_report> registry_store::scan_pass(std::size_t batch, std::string& error) {
  janitor_report report;
  std::unordered_map<std::string, bool> alive;  // owner -> heartbeat present
  std::string cursor = "0";
  do {
    const redis::value page =
        call({"HSCAN", keys::registry, cursor, "COUNT", std::to_string(batch)});
    if (failed(page, error)) return std::nullopt;
    if (!page.is_array() || page.elements.size() != 2) break;
    cursor = page.elements[0].text;
    std::unordered_map<std::string, std::vector<std::string>> by_owner;
    const auto& kv = page.elements[1].elements;
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
      const std::string& owner = kv[i + 1].text;
      auto it = alive.find(owner);
      if (it == alive.end()) {
        const redis::value e = call({"EXISTS", keys::heartbeat(owner)});
        if (failed(e, error)) return std::nullopt;
        it = alive.emplace(owner, e.integer == 1).first;
        ++report.instances_checked;
        if (!it->second) report.dead.push_back(owner);
      }
      if (!it->second) by_owner[owner].push_back(kv[i].text);
    }
    for (auto& [owner, imeis] : by_owner) {
      std::vector<std::string> argv = {"FCALL",        "tgw_registry_evict",   "2",
                                       keys::registry, keys::heartbeat(owner), owner};
      argv.insert(argv.end(), imeis.begin(), imeis.end());
      const redis::value n = call(argv);
      if (failed(n, error)) return std::nullopt;
      report.evicted += static_cast<std::uint64_t>(n.as_int().value_or(0));
    }
  } while (cursor != "0");
  return report;
}

std::optional<janitor_report> registry_store::janitor_pass(janitor_mode mode, std::size_t batch,
                                                           std::string& error) {
  if (mode == janitor_mode::scan) return scan_pass(batch, error);
  janitor_report report;
  const redis::value known = call({"SMEMBERS", keys::known_instances});
  if (failed(known, error)) return std::nullopt;
  for (const redis::value& id : known.elements) {
    ++report.instances_checked;
    const redis::value e = call({"EXISTS", keys::heartbeat(id.text)});
    if (failed(e, error)) return std::nullopt;
    if (e.integer == 1) continue;
    report.dead.push_back(id.text);
    const auto n = evict_instance(id.text, batch, error);
    if (!n) return std::nullopt;
    report.evicted += *n;
  }
  return report;
}

}  // namespace tgw::infra::registry
