#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/registry/heartbeat_holder.hpp"

namespace tgw::infra::registry {

/// What the start-up claim of an instance id found.
struct instance_claim {
  bool claimed = false;      ///< This process holds the heartbeat now.
  bool live_holder = false;  ///< Refused: another process renews the heartbeat.
  std::string refusal;       ///< Why it was not claimed: the live holder, or Redis' words.
};

/// Before an instance announces itself: takes its heartbeat keys (`heartbeat_keys`, one
/// per key shard; the first decides) for `me`, unless a live process holds them. A key
/// that is absent is taken at once (SET NX). A holder that is gone from this host (a
/// crashed predecessor) is replaced at once. Any other holder is watched for up to its
/// renewal interval and 2 s more (bounded by the key's TTL): it is live if it renews
/// the key meanwhile, and presumed dead (and replaced, with a line through `say`)
/// if not. Blocks while it watches: call it at start, before any device is accepted.
[[nodiscard]] instance_claim claim_instance_id(redis::connection& conn, const std::string& instance,
                                               const std::vector<std::string>& heartbeat_keys,
                                               const heartbeat_holder& me, std::chrono::seconds ttl,
                                               const std::function<void(const std::string&)>& say);

}  // namespace tgw::infra::registry
