#pragma once

#include <chrono>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/gateway/session.hpp"

namespace tgw::actors::gateway {

/// UDP ingestion: each datagram is parsed, its records persisted through the device's
/// writer shard, and only then answered with the 7-byte response echoing the packet
/// id and the AVL packet id. A malformed datagram is counted and logged and gets no
/// response. Devices retry unanswered datagrams, and the resend is recognised by the
/// fingerprint of its AVL data, so it is answered again without being stored twice.
///
/// UDP has no connection, so the lifecycle is inferred: the first datagram of an IMEI
/// not seen within `idle_timeout` journals `identified` (transport udp) before its
/// records, and a sweep journals `disconnected` (reason "udp idle") for every IMEI
/// silent for `idle_timeout`. One timer serves all devices; it runs only while some
/// device is present. One actor serves every UDP device.
caf::behavior udp_ingest(caf::event_based_actor* self,
                         const std::shared_ptr<const session_config>& config,
                         std::chrono::milliseconds idle_timeout);

}  // namespace tgw::actors::gateway
