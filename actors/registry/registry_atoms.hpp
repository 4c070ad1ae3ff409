#pragma once

#include <caf/atom.hpp>

/// The atoms of the registry folder's actors, all local to one process. What each
/// message means is said at the interface that takes it (registry_actors.hpp).
namespace tgw::actors::registry {

// Messages between actors.

/// (register_atom, std::string imei): a session's device was identified here.
using register_atom = caf::atom_constant<caf::atom("register")>;
/// (unregister_atom, std::string imei): that device's connection closed.
using unregister_atom = caf::atom_constant<caf::atom("unregist")>;
/// (unreg_all_atom) -> std::size_t: at shutdown, unregister every held device.
using unreg_all_atom = caf::atom_constant<caf::atom("unregall")>;

// Messages an actor sends only to itself (its timers).

/// (beat_atom): the registry's heartbeat timer.
using beat_atom = caf::atom_constant<caf::atom("beat")>;
/// (sweep_atom): the janitor's timer.
using sweep_atom = caf::atom_constant<caf::atom("sweep")>;

}  // namespace tgw::actors::registry
