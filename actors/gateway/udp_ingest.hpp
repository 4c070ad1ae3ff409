#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "actors/domain/token_bucket.hpp"
#include "actors/gateway/gateway_actors.hpp"
#include "actors/gateway/session.hpp"
#include "actors/gateway/udp_config.hpp"

namespace tgw::actors::gateway {

/// What the UDP actor keeps between messages.
struct udp_state {
  static constexpr const char* name = "udp-ingest";
  /// IMEI -> time of its last accepted datagram: the devices considered present.
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> last_seen;
  /// IMEIs whose first datagram waits for the store's word on them.
  std::unordered_set<std::string> identifying;
  domain::token_bucket new_devices;
  bool sweep_scheduled = false;
};

/// UDP ingestion: each datagram is parsed, its records persisted through the device's
/// writer shard, and only then answered with the 7-byte response echoing the packet
/// id and the AVL packet id. A malformed datagram is counted and logged (within a log
/// budget) and gets no response. Devices retry unanswered datagrams, and the resend is
/// recognised by the fingerprint of its AVL data, so it is answered again without being
/// stored twice.
///
/// UDP has no connection, so the lifecycle is inferred: the first datagram of an IMEI
/// not seen within `idle_timeout` journals `identified` (transport udp) before its
/// records, and a sweep journals `disconnected` (reason "udp idle") for every IMEI
/// silent for `idle_timeout`. One timer serves all devices; it runs only while some
/// device is present. One actor serves every UDP device.
///
/// What a source can make it spend is bounded: a device the store does not know yet
/// costs a token of the instance's new-device budget (without one, nothing is written
/// for it and its datagram goes unanswered), at most `max_devices` are present, and a
/// datagram of a device whose first one is still being checked is dropped (the device
/// sends it again).
udp_ingest_self_actor::behavior_type udp_ingest(
    udp_ingest_self_actor::stateful_pointer<udp_state> self,
    const std::shared_ptr<const session_config>& config, const udp_config& udp);

}  // namespace tgw::actors::gateway
