#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "actors/ports/command_store.hpp"

/// The atoms of the outbound-command actors, and the types their messages carry, all
/// local to one process. What each message means is said at the interface that takes
/// it (command_actors.hpp).
namespace tgw::actors::commands {

// Messages between actors.

/// (command_atom, command_entry): the reader hands a command to its device's session.
using command_atom = caf::atom_constant<caf::atom("command")>;
/// (resolve_atom, command_entry, resolution): publish the terminal response and XACK.
/// Not "resolve": that text would make it caf::resolve_atom under a second name.
using resolve_atom = caf::atom_constant<caf::atom("cmdresolve")>;
/// (drain_off_atom, std::string imei): move the device's offline queue into our stream.
using drain_off_atom = caf::atom_constant<caf::atom("drainoff")>;
/// (sync_atom) -> bool: answered once everything sent before it is handled.
using sync_atom = caf::atom_constant<caf::atom("sync")>;

// Messages an actor sends only to itself (its timers and its loop).

/// (read_atom): the reader's next XREADGROUP round.
using read_atom = caf::atom_constant<caf::atom("read")>;
/// (flush_atom): the responder publishes what it has gathered. Sent behind the
/// resolutions already queued, so they join the batch. The same text as the telemetry
/// writer's (actors/gateway/gateway_atoms.hpp), which means the same there.
using flush_atom = caf::atom_constant<caf::atom("batchflush")>;
/// (retry_atom): the responder's backoff is over; it publishes again what Redis refused.
using retry_atom = caf::atom_constant<caf::atom("retry")>;
/// (settle_atom): the responder looks whether its failure spell has ended
/// (domain::failure_log::settled).
using settle_atom = caf::atom_constant<caf::atom("settle")>;

}  // namespace tgw::actors::commands

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::ports::command_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::ports::resolution)
