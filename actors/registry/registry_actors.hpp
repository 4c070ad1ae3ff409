#pragma once

#include <cstddef>
#include <string>

#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

/// The messages of the registry folder's actors and the interface of each: a handle
/// of one of these types takes only the messages its interface names. All are local to
/// one process.
namespace tgw::actors::registry {

// The atoms, each with its meaning at the interface that takes it.
using register_atom = caf::atom_constant<caf::atom("register")>;
using unregister_atom = caf::atom_constant<caf::atom("unregist")>;
using unreg_all_atom = caf::atom_constant<caf::atom("unregall")>;
using beat_atom = caf::atom_constant<caf::atom("beat")>;
using sweep_atom = caf::atom_constant<caf::atom("sweep")>;

/// The registry: the only writer of this instance's registry entries (registry_actor.hpp).
using registry_actor = caf::typed_actor<
    // A device identified on this instance (its IMEI, validated): it is held here.
    caf::reacts_to<register_atom, std::string>,
    // That device's connection closed, whatever the cause: released once no other
    // session of it is left here.
    caf::reacts_to<unregister_atom, std::string>,
    // At shutdown: unregister every held device that is still this instance's
    // (owner-checked); answers how many entries were deleted.
    caf::replies_to<unreg_all_atom>::with<std::size_t>,
    // The heartbeat timer, sent to itself: write the heartbeat, repair what Redis lost.
    caf::reacts_to<beat_atom>>;

/// The janitor: evicts the entries of dead instances and adopts their command streams
/// (registry_actor.hpp).
using janitor_actor = caf::typed_actor<
    // Its timer, sent to itself: one pass over the dead instances.
    caf::reacts_to<sweep_atom>>;

}  // namespace tgw::actors::registry
