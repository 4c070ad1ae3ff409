#include "infra/telemetry/device_listing.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "infra/registry/registry_keys.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra::telemetry {
namespace {

constexpr std::size_t pipeline_batch = 500;

field_list pairs_of(const redis::value& hash) {
  field_list out;
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2)
    out.emplace_back(hash.elements[i].text, hash.elements[i + 1].text);
  return out;
}

/// Fills in the projections of `devices` (all of key shard `prefix`) and whether
/// their owners' heartbeats exist there.
bool complete(redis::connection& conn, const std::string& prefix,
              std::vector<listed_device>& devices, std::string& error) {
  std::map<std::string, bool> alive;
  for (const listed_device& d : devices)
    if (!d.owner.empty()) alive.emplace(d.owner, false);
  std::vector<std::vector<std::string>> commands;
  for (const auto& [owner, unused] : alive)
    commands.push_back({"EXISTS", registry::keys::heartbeat(owner, prefix)});
  for (std::size_t from = 0; from < devices.size() || !commands.empty(); from += pipeline_batch) {
    const std::size_t beats = commands.size();
    const std::size_t to = std::min(devices.size(), from + pipeline_batch);
    for (std::size_t i = from; i < to; ++i)
      commands.push_back({"HGETALL", keys::device(devices[i].imei, prefix)});
    const std::vector<redis::value> replies = conn.pipeline(commands);
    for (const redis::value& r : replies)
      if (r.is_error()) {
        error = r.text;
        return false;
      }
    auto beat = alive.begin();
    for (std::size_t i = 0; i < beats; ++i, ++beat) beat->second = replies[i].integer == 1;
    for (std::size_t i = from; i < to; ++i) {
      const redis::value& hash = replies[beats + (i - from)];
      devices[i].has_projection = !hash.elements.empty();
      devices[i].projection = parse(pairs_of(hash));
    }
    commands.clear();
  }
  for (listed_device& d : devices)
    if (const auto it = alive.find(d.owner); it != alive.end()) d.owner_alive = it->second;
  return true;
}

}  // namespace

std::optional<std::vector<listed_device>> list_registered_devices(redis::connection& conn,
                                                                  const redis::key_shards& shards,
                                                                  std::string& error) {
  std::vector<listed_device> all;
  for (std::uint32_t shard = 0; shard < shards.count(); ++shard) {
    const std::string& prefix = shards.prefix(shard);
    std::vector<listed_device> in_shard;
    std::string cursor = "0";
    do {
      const redis::value page =
          conn.command({"HSCAN", registry::keys::registry_in(prefix), cursor, "COUNT", "1000"});
      if (page.is_error() || page.elements.size() != 2) {
        error = page.is_error() ? page.text : "HSCAN: unexpected reply";
        return std::nullopt;
      }
      cursor = page.elements[0].text;
      const auto& kv = page.elements[1].elements;
      for (std::size_t i = 0; i + 1 < kv.size(); i += 2)
        in_shard.push_back({kv[i].text, kv[i + 1].text, false, false, {}});
    } while (cursor != "0");
    if (!complete(conn, prefix, in_shard, error)) return std::nullopt;
    std::move(in_shard.begin(), in_shard.end(), std::back_inserter(all));
  }
  // HSCAN may return an entry twice while the hash is rehashed.
  std::sort(all.begin(), all.end(),
            [](const listed_device& a, const listed_device& b) { return a.imei < b.imei; });
  all.erase(
      std::unique(all.begin(), all.end(),
                  [](const listed_device& a, const listed_device& b) { return a.imei == b.imei; }),
      all.end());
  return all;
}

std::optional<listed_device> read_listed_device(redis::connection& conn,
                                                const redis::key_shards& shards,
                                                const std::string& imei, std::string& error) {
  const std::string& prefix = shards.prefix_of(imei);
  const redis::value owner = conn.command({"HGET", registry::keys::registry_in(prefix), imei});
  if (owner.is_error()) {
    error = owner.text;
    return std::nullopt;
  }
  std::vector<listed_device> one{
      {imei, owner.is_nil() ? std::string() : owner.text, false, false, {}}};
  if (!complete(conn, prefix, one, error)) return std::nullopt;
  return std::move(one.front());
}

}  // namespace tgw::infra::telemetry
