#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "actors/ports/telemetry_store.hpp"
#include "actors/ports/udp_reply.hpp"

/// The atoms of the gateway's actors, and the types their messages carry. All are local
/// to one process: the store types travel between actors of one instance and are never
/// serialized. What each message means is said at the interface that takes it
/// (gateway_actors.hpp).
namespace tgw::actors::gateway {

// Messages between actors.

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
/// (revoke_atom): the allowlist changed; a session whose device it no longer admits
/// disconnects it.
using revoke_atom = caf::atom_constant<caf::atom("revoke")>;
/// (note_atom, journal_event): an event no one waits for; a failure is only logged.
using note_atom = caf::atom_constant<caf::atom("note")>;
/// (datagram_atom, std::vector<uint8_t>, udp_reply, std::string peer): a UDP datagram
/// to ingest, with its sender as ip:port.
using datagram_atom = caf::atom_constant<caf::atom("datagram")>;

// Messages an actor sends only to itself (its timers and its loop).

/// (cmd_timeout_atom, std::string entry_id): a session's response timer fired.
using cmd_timeout_atom = caf::atom_constant<caf::atom("cmdtimeout")>;
/// (flush_atom): the telemetry writer writes what it has gathered. Sent behind the
/// writes already queued, so they join the batch. The same text as the command
/// responder's (actors/commands/command_atoms.hpp), which means the same there.
using flush_atom = caf::atom_constant<caf::atom("batchflush")>;
/// (retry_atom): the writer's wait after a refusal is over; it sends again what Redis
/// refused and may safely take again.
using retry_atom = caf::atom_constant<caf::atom("retry")>;
/// (settle_atom): the writer looks whether a failure spell whose last success came soon
/// after its last failure has ended (domain::failure_log::settled).
using settle_atom = caf::atom_constant<caf::atom("settle")>;
/// (retain_atom): the retention actor's timer.
using retain_atom = caf::atom_constant<caf::atom("retain")>;
/// (udp_sweep_atom): the UDP actor's timer; devices silent for the idle timeout leave.
using udp_sweep_atom = caf::atom_constant<caf::atom("udp_sweep")>;

}  // namespace tgw::actors::gateway

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::ports::packet_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::ports::journal_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::ports::write_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::ports::udp_reply)
