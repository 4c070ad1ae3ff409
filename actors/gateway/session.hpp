#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "actors/commands/command_actors.hpp"
#include "actors/domain/allowlist.hpp"
#include "actors/gateway/gateway_actors.hpp"
#include "actors/gateway/session_actor_base.hpp"
#include "actors/ports/device_link.hpp"
#include "actors/registry/registry_actors.hpp"
#include "codecs/codec_id.hpp"

namespace tgw::infra::metrics {
struct gateway_counters;
}
namespace tgw::actors::gateway {

class session_directory;

using infra::metrics::gateway_counters;

/// What every session of one instance shares.
struct session_config {
  std::string instance_id;
  codecs::crc_policy crc = codecs::crc_policy::strict;
  /// Devices allowed to connect (replaced on SIGHUP); null admits every well-formed IMEI.
  std::shared_ptr<const domain::allowlist> allowlist;
  /// Telemetry writer shards; a device always goes to the same one.
  std::vector<telemetry_writer_actor> writers;
  /// The registry actor; told when a device is identified and when it leaves.
  registry::registry_actor registry;
  std::shared_ptr<gateway_counters> counters;
  /// Outbound commands: where sessions announce themselves to the command reader, the
  /// actor that publishes their outcomes, the per-device queue bound and the time a
  /// device has to answer. Without a responder, sessions take no commands.
  std::shared_ptr<session_directory> directory;
  commands::command_responder_actor responder;
  std::size_t command_queue_limit = 16;
  std::chrono::milliseconds command_timeout{30'000};
  /// AVL frames that fail to decode before the connection is closed; 0: no limit.
  std::uint32_t max_bad_frames = 3;
};

/// One device session. It receives the connection's frames as messages, owns the
/// device's state, and talks back only through `link`: the handshake is answered
/// 01/00, an AVL packet is decoded, persisted through the device's writer shard and
/// only then ACKed with the number of records stored; a resend after a lost ACK is
/// ACKed again without being stored twice; a malformed frame is refused, counted and
/// logged with the IMEI, and gets no ACK, and after `max_bad_frames` of them the
/// connection closes. An IMEI the store does not know yet is accepted only on a
/// new-device token of its source address, so that no source makes keys without
/// bound. Every change is a journal event.
session_self_actor::behavior_type session(session_actor_base* self,
                                          const std::shared_ptr<ports::device_link>& link,
                                          const std::shared_ptr<const session_config>& config);

/// The connection_listener that forwards a connection's frames to its session actor.
std::unique_ptr<ports::connection_listener> make_session_listener(session_actor session);

}  // namespace tgw::actors::gateway
