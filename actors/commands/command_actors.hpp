#pragma once

#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/commands/command_atoms.hpp"

/// The interfaces of the outbound-command actors: a handle of one of these types takes
/// only the messages its interface names. Others hold an actor by its public interface
/// (`<role>_actor`); what the actor also sends itself (its timers) is only in the
/// interface it runs with (`<role>_self_actor`), so no one else can send it.
namespace tgw::actors::commands {

/// What the command reader needs of a device session: that it takes a command. The
/// session's interface (actors/gateway/gateway_actors.hpp) lists this message too, so
/// a session handle converts to this one, and the commands need nothing else of the
/// gateway: the gateway depends on the commands, never the other way round.
using command_target_actor = caf::typed_actor<caf::reacts_to<command_atom, ports::command_entry>>;

/// The stream reader (command_reader.hpp). Its only message is its own loop, so the
/// loop is its public interface too: CAF 0.17 has no typed handle with no message
/// ("Empty typed actor handle", caf/typed_actor.hpp) and a typed actor handles only
/// what its interface lists. Others hold the handle only to stop it.
using command_reader_actor = caf::typed_actor<
    // Its loop, sent to itself: one XREADGROUP round on its own connection.
    caf::reacts_to<read_atom>>;

/// The responder (command_responder.hpp).
using command_responder_actor = caf::typed_actor<
    // A session resolved a command: publish the terminal response with its journal
    // event and the XACK.
    caf::reacts_to<resolve_atom, ports::command_entry, ports::resolution>,
    // A device connected: move its offline queue into this instance's stream.
    caf::reacts_to<drain_off_atom, std::string>,
    // At shutdown: answered once everything sent before it is handled; true when
    // nothing is left unpublished.
    caf::replies_to<sync_atom>::with<bool>>;

/// The responder as it runs: its public interface and what it sends itself.
using command_responder_self_actor = command_responder_actor::extend<
    // Sent to itself behind the resolutions already queued: publish them in one round
    // trip.
    caf::reacts_to<flush_atom>,
    // Its timer: look whether the failure spell has settled.
    caf::reacts_to<settle_atom>,
    // Its timer: the backoff is over; publish again what Redis refused.
    caf::reacts_to<retry_atom>>;

}  // namespace tgw::actors::commands
