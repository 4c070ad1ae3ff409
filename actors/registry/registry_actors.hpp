#pragma once

#include <cstddef>
#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/registry/registry_atoms.hpp"

/// The interfaces of the registry folder's actors: a handle of one of these types takes
/// only the messages its interface names. Others hold an actor by its public interface
/// (`<role>_actor`); what the actor also sends itself (its timers) is only in the
/// interface it runs with (`<role>_self_actor`), so no one else can send it.
namespace tgw::actors::registry {

/// The registry: the only writer of this instance's registry entries (registry_actor.hpp).
using registry_actor = caf::typed_actor<
    // A device identified on this instance (its IMEI, validated): it is held here.
    caf::reacts_to<register_atom, std::string>,
    // That device's connection closed, whatever the cause: released once no other
    // session of it is left here.
    caf::reacts_to<unregister_atom, std::string>,
    // At shutdown: unregister every held device that is still this instance's
    // (owner-checked); answers how many entries were deleted.
    caf::replies_to<unreg_all_atom>::with<std::size_t>>;

/// The registry as it runs: its public interface and its own timer.
using registry_self_actor = registry_actor::extend<
    // The heartbeat timer, sent to itself: write the heartbeat, repair what Redis lost.
    caf::reacts_to<beat_atom>>;

/// The janitor: evicts the entries of dead instances and adopts their command streams
/// (registry_actor.hpp).
/// Its only message is its own timer, so the timer is its public interface too: CAF 0.17
/// has no typed handle with no message ("Empty typed actor handle", caf/typed_actor.hpp)
/// and a typed actor handles only what its interface lists. Others hold the handle only
/// to stop it.
using janitor_actor = caf::typed_actor<
    // Its timer, sent to itself: one pass over the dead instances.
    caf::reacts_to<sweep_atom>>;

}  // namespace tgw::actors::registry
