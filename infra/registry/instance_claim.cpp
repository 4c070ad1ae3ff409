#include "infra/registry/instance_claim.hpp"

#include <algorithm>
#include <thread>

namespace tgw::infra::registry {
namespace {

using namespace std::chrono_literals;

// The interval a holder of an older tgw (whose value is the time it wrote) renews at.
constexpr std::chrono::milliseconds unknown_interval{30'000};
constexpr std::chrono::milliseconds margin{2'000};
constexpr std::chrono::milliseconds poll{250};
// What a TTL read may be above its expected fall without a renewal: the time between
// reading the clock and Redis reading its own.
constexpr std::chrono::milliseconds renewal_margin{100};

bool failed(const redis::value& v, instance_claim& out) {
  if (!v.is_error()) return false;
  out.refusal = "cannot read the heartbeat: " + v.text;
  return true;
}

std::string whom(const std::string& value) {
  const auto holder = heartbeat_holder::parse(value);
  return holder ? holder->describe() : "a process that wrote '" + value + "'";
}

}  // namespace

instance_claim claim_instance_id(redis::connection& conn, const std::string& instance,
                                 const std::vector<std::string>& heartbeat_keys,
                                 const heartbeat_holder& me, std::chrono::seconds ttl,
                                 const std::function<void(const std::string&)>& say) {
  instance_claim out;
  if (heartbeat_keys.empty()) {
    out.claimed = true;
    return out;
  }
  const std::string& key = heartbeat_keys.front();
  const std::string mine = me.value();
  const std::string ttl_s = std::to_string(std::max<std::int64_t>(1, ttl.count()));
  // Writes every shard's key; the first only if it is still absent when `absent`.
  auto take = [&](bool absent) {
    if (absent) {
      const redis::value set = conn.command({"SET", key, mine, "NX", "EX", ttl_s});
      if (failed(set, out)) return false;
      if (set.is_nil()) return false;  // someone took it meanwhile: look again
    }
    for (const std::string& k : heartbeat_keys) {
      if (absent && k == key) continue;
      if (failed(conn.command({"SET", k, mine, "EX", ttl_s}), out)) return false;
    }
    out.claimed = true;
    return true;
  };
  for (int attempt = 0; attempt < 3; ++attempt) {
    const redis::value current = conn.command({"GET", key});
    if (failed(current, out)) return out;
    if (current.is_nil() || current.text == mine) {
      if (take(current.is_nil())) return out;
      if (!out.refusal.empty()) return out;
      continue;
    }
    const auto holder = heartbeat_holder::parse(current.text);
    if (holder && holder->gone_from_this_host()) {
      say("instance " + instance + ": the heartbeat was left by " + holder->describe() +
          ", which no longer runs: taking it over");
      take(false);
      return out;
    }
    // A holder elsewhere (or an older tgw's value): live if it renews the key within
    // its interval. A renewal rewrites the value with a new TTL, so the TTL rises.
    const auto interval =
        holder ? std::chrono::milliseconds{holder->interval_ms} : unknown_interval;
    const redis::value first_ttl = conn.command({"PTTL", key});
    if (failed(first_ttl, out)) return out;
    auto watch_for = interval + margin;
    if (const auto left = first_ttl.as_int(); left && *left >= 0)
      watch_for = std::min(watch_for, std::chrono::milliseconds{*left} + poll);
    say("instance " + instance + ": its heartbeat is held by " + whom(current.text) +
        "; watching up to " + std::to_string((watch_for.count() + 999) / 1000) +
        " s for a renewal, which would mean that process is alive");
    // Left alone, the TTL falls as time passes; a renewal puts it back up. A TTL above
    // what the first one would have fallen to by now is a renewal.
    const std::int64_t first = first_ttl.as_int().value_or(-2);
    const auto first_at = std::chrono::steady_clock::now();
    const auto deadline = first_at + watch_for;
    bool renewed = false;
    bool vanished = false;
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(poll);
      const redis::value now = conn.command({"GET", key});
      if (failed(now, out)) return out;
      if (now.is_nil()) {
        vanished = true;
        break;
      }
      const redis::value left = conn.command({"PTTL", key});
      if (failed(left, out)) return out;
      const std::int64_t t = left.as_int().value_or(-2);
      const auto fallen = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - first_at)
                              .count();
      if (now.text != current.text || (first >= 0 && t > first - fallen + renewal_margin.count())) {
        renewed = true;
        out.refusal = "instance id '" + instance + "' is in use: its heartbeat is renewed by " +
                      whom(now.text) +
                      "; give this instance another --instance-id (TGW_INSTANCE_ID), or stop "
                      "that one first";
        out.live_holder = true;
        break;
      }
    }
    if (renewed) return out;
    if (vanished) continue;  // it stopped (or expired): take the key as absent
    say("instance " + instance + ": the heartbeat of " + whom(current.text) +
        " was not renewed for " + std::to_string(watch_for.count() / 1000) +
        " s; presuming it dead and taking the instance id over");
    take(false);
    return out;
  }
  if (out.refusal.empty()) out.refusal = "the heartbeat key changed hands while it was claimed";
  return out;
}

}  // namespace tgw::infra::registry
