#include "infra/api/redis_api_store.hpp"

#include "infra/api/api_json.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <thread>

#include "infra/api/tokens.hpp"
#include "infra/commands/command_keys.hpp"
#include "infra/redis/server_mode.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/redis/stream_pages.hpp"
#include "infra/registry/registry_keys.hpp"
#include "infra/telemetry/entry_view.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra::api {
namespace {

using telemetry::listed_device;

// A read of the telemetry stream, a page of the index: how many entries one round trip
// asks for.
constexpr std::size_t stream_page = 1000;

telemetry::field_list pairs_of(const redis::value& hash) {
  telemetry::field_list out;
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2)
    out.emplace_back(hash.elements[i].text, hash.elements[i + 1].text);
  return out;
}

bool first_error(const std::vector<redis::value>& replies, std::string& error) {
  for (const redis::value& r : replies)
    if (r.is_error()) {
      error = r.text;
      return true;
    }
  return false;
}

// A failure after which the same call may go through: the connection was lost (the
// command id makes a repeated publish harmless), or the store is between masters.
bool worth_repeating(const std::string& error) {
  for (const char* transient : {"IO", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "LOADING"})
    if (error.starts_with(transient)) return true;
  return false;
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The registry entries, projections and owners' heartbeats of `imeis`, in one
// pipelined round trip for the first two (per master) and one for the heartbeats.
std::optional<std::vector<listed_device>> complete(redis::connection& conn,
                                                   const redis::key_shards& shards,
                                                   const std::vector<std::string>& imeis,
                                                   std::string& error) {
  std::vector<std::vector<std::string>> reads;
  reads.reserve(imeis.size() * 2);
  for (const std::string& imei : imeis) {
    const std::string& prefix = shards.prefix_of(imei);
    reads.push_back({"HGET", registry::keys::registry_in(prefix), imei});
    reads.push_back({"HGETALL", telemetry::keys::device(imei, prefix)});
  }
  const std::vector<redis::value> replies = conn.pipeline(reads);
  if (replies.size() != reads.size()) {
    error = "IO: a pipelined read came back short";
    return std::nullopt;
  }
  if (first_error(replies, error)) return std::nullopt;
  std::vector<listed_device> out;
  out.reserve(imeis.size());
  std::map<std::pair<std::string, std::string>, bool> owners;  // (prefix, owner) -> alive
  for (std::size_t i = 0; i < imeis.size(); ++i) {
    listed_device d;
    d.imei = imeis[i];
    if (!replies[2 * i].is_nil()) d.owner = replies[2 * i].text;
    const redis::value& hash = replies[2 * i + 1];
    d.has_projection = !hash.elements.empty();
    d.projection = telemetry::parse(pairs_of(hash));
    if (!d.owner.empty()) owners.emplace(std::make_pair(shards.prefix_of(d.imei), d.owner), false);
    out.push_back(std::move(d));
  }
  if (!owners.empty()) {
    std::vector<std::vector<std::string>> beats;
    for (const auto& [key, alive] : owners)
      beats.push_back({"EXISTS", registry::keys::heartbeat(key.second, key.first)});
    const std::vector<redis::value> found = conn.pipeline(beats);
    if (found.size() != beats.size()) {
      error = "IO: a pipelined read came back short";
      return std::nullopt;
    }
    if (first_error(found, error)) return std::nullopt;
    std::size_t i = 0;
    for (auto& [key, alive] : owners) alive = found[i++].integer == 1;
    for (listed_device& d : out)
      if (!d.owner.empty()) d.owner_alive = owners.at({shards.prefix_of(d.imei), d.owner});
  }
  return out;
}

bool wanted(const listed_device& d, const device_query& q, std::int64_t now) {
  const bool online = d.projection.online == "1";
  const auto seen = integer_text(d.projection.last_seen_ms);
  if (!online && !(seen && now - *seen <= q.seen_within_ms)) return false;
  if (q.online && *q.online != online) return false;
  if (q.silent_for_ms && seen && now - *seen < *q.silent_for_ms) return false;
  return true;
}

}  // namespace

redis_api_store::redis_api_store(redis::connection::options where,
                                 const telemetry::io_dictionary* names)
    : where_(where), conn_(std::move(where)), names_(names) {}

std::optional<redis::key_shards> redis_api_store::shards(std::string& error, bool& none) {
  none = false;
  if (shards_) return shards_;
  if (!conn_.ensure_connected(error)) return std::nullopt;
  if (!conn_.settings().where.via_cluster()) {
    shards_ = redis::key_shards{};
  } else {
    auto read = redis::read_key_shards(conn_, error, &none);
    if (!read) return std::nullopt;
    shards_ = std::move(read);
  }
  // The publisher splits its keys the same way; made once the split is known.
  redis::connection::options publishing = where_;
  publishing.io_timeout = std::max(publishing.io_timeout, std::chrono::milliseconds{3000});
  publisher_ = std::make_unique<commands::command_publisher>(
      publishing, std::chrono::milliseconds{1000}, *shards_);
  return shards_;
}

std::optional<device_page> redis_api_store::devices(const device_query& q, std::string& error) {
  bool none = false;
  const auto now = redis::server_time_ms(conn_, error);
  if (!now) return std::nullopt;
  device_page page;
  page.at_ms = *now;
  const auto sh = shards(error, none);
  if (!sh) {
    if (none) return page;  // a cluster no gateway has written to: no device yet
    return std::nullopt;
  }
  const std::size_t batch = std::clamp<std::size_t>(q.limit, 100, stream_page);
  std::string cursor = q.after;
  std::size_t scanned = 0;
  for (;;) {
    // The next `batch` IMEIs after the cursor over every shard, in order: each shard's
    // first `batch`, merged.
    std::vector<std::vector<std::string>> ranges;
    for (std::uint32_t s = 0; s < sh->count(); ++s)
      ranges.push_back({"ZRANGE", telemetry::keys::devices_index_in(sh->prefix(s)),
                        cursor.empty() ? "-" : "(" + cursor, "+", "BYLEX", "LIMIT", "0",
                        std::to_string(batch)});
    const std::vector<redis::value> replies = conn_.pipeline(ranges);
    if (replies.size() != ranges.size()) {
      error = "IO: a pipelined read came back short";
      return std::nullopt;
    }
    if (first_error(replies, error)) return std::nullopt;
    bool last_batch = true;
    std::vector<std::string> imeis;
    for (const redis::value& r : replies) {
      if (r.elements.size() >= batch) last_batch = false;
      for (const redis::value& e : r.elements) imeis.push_back(e.text);
    }
    std::sort(imeis.begin(), imeis.end());
    if (imeis.size() > batch) {
      imeis.resize(batch);
      last_batch = false;
    }
    if (imeis.empty()) return page;
    const auto listed = complete(conn_, *sh, imeis, error);
    if (!listed) return std::nullopt;
    for (std::size_t i = 0; i < listed->size(); ++i) {
      const listed_device& d = (*listed)[i];
      ++scanned;
      cursor = d.imei;
      if (!wanted(d, q, *now)) continue;
      page.devices.push_back(d);
      if (page.devices.size() == q.limit) {
        if (i + 1 < listed->size() || !last_batch) page.next_cursor = cursor;
        return page;
      }
    }
    if (last_batch) return page;
    if (scanned >= max_devices_scanned) {
      page.next_cursor = cursor;
      return page;
    }
  }
}

std::optional<std::optional<device_detail>> redis_api_store::device(const std::string& imei,
                                                                    std::string& error) {
  bool none = false;
  const auto now = redis::server_time_ms(conn_, error);
  if (!now) return std::nullopt;
  const auto sh = shards(error, none);
  if (!sh) {
    if (none) return std::optional<device_detail>{};
    return std::nullopt;
  }
  auto d = telemetry::read_listed_device(conn_, *sh, imei, error);
  if (!d) return std::nullopt;
  auto open = commands::read_open_commands(conn_, *sh, imei, error);
  if (!open) return std::nullopt;
  if (d->owner.empty() && !d->has_projection && open->empty())
    return std::optional<device_detail>{};
  return std::optional<device_detail>{device_detail{std::move(*d), std::move(*open), *now}};
}

std::optional<record_page> redis_api_store::records(const record_query& q, std::string& error) {
  bool none = false;
  const auto sh = shards(error, none);
  record_page page;
  if (!sh) {
    if (none) return page;
    return std::nullopt;
  }
  const std::string key = telemetry::keys::telemetry_stream_in(sh->prefix_of(q.imei));
  std::string start = !q.after.empty() ? "(" + q.after
                      : q.from_ms > 0  ? std::to_string(q.from_ms) + "-0"
                                       : std::string("-");
  const std::string end =
      q.to_ms > 0 ? std::to_string(q.to_ms) + "-18446744073709551615" : std::string("+");
  std::size_t scanned = 0;
  for (;;) {
    const redis::value reply =
        conn_.command({"XRANGE", key, start, end, "COUNT", std::to_string(stream_page)});
    if (reply.is_error()) {
      error = reply.text;
      return std::nullopt;
    }
    const std::vector<redis::stream_entry> entries = redis::stream_entries(reply);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const redis::stream_entry& e = entries[i];
      ++scanned;
      start = "(" + e.id;
      if (e.get("imei") != q.imei) continue;
      telemetry::entry_map fields(e.fields.begin(), e.fields.end());
      page.records.push_back(telemetry::entry_json(e.id, fields, q.names ? names_ : nullptr));
      if (page.records.size() == q.limit) {
        if (i + 1 < entries.size() || entries.size() == stream_page) page.next_cursor = e.id;
        return page;
      }
    }
    if (entries.size() < stream_page) return page;
    if (scanned >= max_entries_scanned) {
      page.next_cursor = entries.back().id;
      return page;
    }
  }
}

std::optional<command_submitted> redis_api_store::submit(const command_submission& c,
                                                         std::string& error) {
  bool none = false;
  const auto sh = shards(error, none);
  if (!sh) {
    if (none) error = "no gateway has written to this Redis Cluster yet: no device can be online";
    return std::nullopt;
  }
  if (!c.queue_if_offline) {
    // A device that never identified has no projection: nothing could deliver to it.
    const redis::value known =
        conn_.command({"EXISTS", telemetry::keys::device(c.imei, sh->prefix_of(c.imei))});
    if (known.is_error()) {
      error = known.text;
      return std::nullopt;
    }
    if (known.integer == 0)
      return command_submitted{c.command_id, "unknown_device", false, false, {}};
  }
  // Findable by its id before anyone can know the id: written first, so that a command
  // the API answers for can always be looked up.
  const redis::value kept = conn_.command(
      {"SET", commands::keys::by_id(c.command_id, sh->prefix(sh->shard_of(c.command_id))),
       c.imei + "|" + std::to_string(wall_ms()), "EX",
       std::to_string(std::max<std::int64_t>(c.idempotency_ttl.count(), 86400))});
  if (kept.is_error()) {
    error = kept.text;
    return std::nullopt;
  }
  publisher_->identify_as(c.publisher);
  commands::publish_once once{sha256_hex(c.publisher + '\n' + c.imei + '\n' + c.idempotency_key),
                              c.fingerprint, c.idempotency_ttl};
  std::optional<commands::publish_result> r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = publisher_->publish(c.imei, c.text, c.codec, c.ttl, c.queue_if_offline, c.command_id, error,
                            c.idempotency_key.empty() ? nullptr : &once);
    if (r || !worth_repeating(error)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  if (!r) return std::nullopt;
  return command_submitted{r->command_id, r->status, r->repeated, r->conflict, r->owner};
}

std::optional<std::optional<command_view>> redis_api_store::command(const std::string& command_id,
                                                                    std::string& error) {
  bool none = false;
  const auto sh = shards(error, none);
  if (!sh) {
    if (none) return std::optional<command_view>{};
    return std::nullopt;
  }
  const redis::value kept = conn_.command(
      {"GET", commands::keys::by_id(command_id, sh->prefix(sh->shard_of(command_id)))});
  if (kept.is_error()) {
    error = kept.text;
    return std::nullopt;
  }
  if (kept.is_nil()) return std::optional<command_view>{};
  const auto bar = kept.text.find('|');
  const std::string imei = kept.text.substr(0, bar);
  const auto published = integer_text(bar == std::string::npos ? std::optional<std::string>{}
                                                               : kept.text.substr(bar + 1));
  // From a minute before it was published: the API's clock and Redis' may differ.
  const std::int64_t since = std::max<std::int64_t>(published.value_or(0) - 60'000, 1);
  auto all = commands::read_command_history(conn_, *sh, imei, since, error);
  if (!all) return std::nullopt;
  for (commands::command_record& r : *all)
    if (r.command_id == command_id)
      return std::optional<command_view>{command_view{imei, std::move(r)}};
  // Published through the API, and nothing kept says more (not yet journaled, or the
  // publish was refused before it reached the store).
  return std::optional<command_view>{};
}

std::optional<std::vector<commands::command_record>> redis_api_store::history(
    const std::string& imei, std::int64_t since_ms, std::string& error) {
  bool none = false;
  const auto sh = shards(error, none);
  if (!sh) {
    if (none) return std::vector<commands::command_record>{};
    return std::nullopt;
  }
  return commands::read_command_history(conn_, *sh, imei, since_ms, error);
}

bool redis_api_store::reachable(std::string& error) {
  const redis::value pong = conn_.command({"PING"});
  if (pong.is_error()) {
    error = pong.text;
    return false;
  }
  return true;
}

}  // namespace tgw::infra::api
