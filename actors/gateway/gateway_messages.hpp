#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "infra/net/udp_server_reply.hpp"
#include "infra/telemetry/telemetry_store.hpp"

/// Messages of the gateway's actors. All are local to one process: the store types
/// travel between actors of one instance and are never serialized.
namespace tgw::actors::gateway {

/// (frame_atom, uint8 kind, uint8 codec, std::vector<uint8_t> bytes): connection to session.
using frame_atom = caf::atom_constant<caf::atom("frame")>;
/// (closed_atom, std::string reason): the connection is gone; to the UDP actor, every
/// UDP device is gone (at shutdown).
using closed_atom = caf::atom_constant<caf::atom("closed")>;
/// (persist_atom, packet_job) -> write_outcome: a request to the telemetry writer.
using persist_atom = caf::atom_constant<caf::atom("persist")>;
/// (event_atom, journal_event) -> write_outcome: a request to the telemetry writer.
using event_atom = caf::atom_constant<caf::atom("event")>;
/// (ingest_atom, packet_job): a device session's packet to its telemetry writer, which
/// answers the sender with (persisted_atom, write_outcome). A session's packets all go
/// to one writer and the writer answers in arrival order, so the session matches the
/// answers to its packets first in, first out. Cheaper than a request: no response
/// handler to allocate and look up for every packet.
using ingest_atom = caf::atom_constant<caf::atom("ingest")>;
/// (persisted_atom, write_outcome): the writer's answer to an ingest_atom message.
using persisted_atom = caf::atom_constant<caf::atom("persisted")>;
/// (retain_atom): the retention actor's timer.
using retain_atom = caf::atom_constant<caf::atom("retain")>;
/// (revoke_atom): the allowlist changed; a session whose device it no longer admits
/// disconnects it.
using revoke_atom = caf::atom_constant<caf::atom("revoke")>;
/// (note_atom, journal_event): an event no one waits for; a failure is only logged.
using note_atom = caf::atom_constant<caf::atom("note")>;
/// (datagram_atom, std::vector<uint8_t>, udp_reply, std::string peer): a UDP datagram
/// to ingest, with its sender as ip:port.
using datagram_atom = caf::atom_constant<caf::atom("datagram")>;
/// (udp_sweep_atom): the UDP actor's timer; devices silent for the idle timeout leave.
using udp_sweep_atom = caf::atom_constant<caf::atom("udp_sweep")>;

}  // namespace tgw::actors::gateway

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::infra::telemetry::packet_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::infra::telemetry::journal_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::infra::telemetry::write_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::infra::net::udp_reply)
