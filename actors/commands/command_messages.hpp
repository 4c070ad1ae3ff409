#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "infra/commands/command_store.hpp"

/// Messages of the outbound-command actors, all local to one process.
namespace tgw::actors::commands {

/// (command_atom, command_entry): the reader hands a command to its device's session.
using command_atom = caf::atom_constant<caf::atom("command")>;
/// (cmd_timeout_atom, std::string entry_id): a session's response timer fired.
using cmd_timeout_atom = caf::atom_constant<caf::atom("cmdtimeout")>;
/// (resolve_atom, command_entry, resolution): publish the terminal response and XACK.
/// Not "resolve": that text would make it caf::resolve_atom under a second name.
using resolve_atom = caf::atom_constant<caf::atom("cmdresolve")>;
/// (drain_off_atom, std::string imei): move the device's offline queue into our stream.
using drain_off_atom = caf::atom_constant<caf::atom("drainoff")>;
/// (read_atom): the reader's next XREADGROUP round.
using read_atom = caf::atom_constant<caf::atom("read")>;
/// (sync_atom) -> bool: answered once everything sent before it is handled.
using sync_atom = caf::atom_constant<caf::atom("sync")>;

}  // namespace tgw::actors::commands

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::infra::commands::command_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tgw::infra::commands::resolution)
