#pragma once

#include <cstdint>
#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/node/node_atoms.hpp"

/// The interfaces of a cluster node's roles: a handle of one of these types takes only
/// the messages its interface names. The other roles hold the emitter and the worker
/// by their public interface, role_actor; emitter_actor and worker_actor are the
/// interfaces they run with, which add what each sends only to itself.
namespace tgw::actors::node {

/// What the membership actor tells every other role of its node.
using role_actor = caf::typed_actor<
    // The membership actor's verdict: whether this node holds the emitter lease, and
    // the lease's epoch.
    caf::reacts_to<role_atom, bool, std::int64_t>>;

/// The emitter role (emitter.hpp).
using emitter_actor = role_actor::extend<
    // Its timer, sent to itself: emit the next batch if the activation of this
    // generation is still the current one.
    caf::reacts_to<emit_atom, std::uint64_t>>;

/// The worker role (worker.hpp).
using worker_actor = role_actor::extend<
    // Sent to itself: take one message from the queue.
    caf::reacts_to<take_atom>,
    // Sent to itself once the handler's time for a message has passed: draw whether
    // it failed.
    caf::reacts_to<done_atom, std::string>,
    // Sent to itself: record the message's outcome in the store (again later while
    // Redis is unreachable).
    caf::reacts_to<finish_atom, std::string, bool>>;

/// The membership role (membership.hpp). Its only message is its own timer, so the
/// timer is its public interface too: CAF 0.17 has no typed handle with no message
/// ("Empty typed actor handle", caf/typed_actor.hpp) and a typed actor handles only
/// what its interface lists. Others hold the handle only to stop it.
using membership_actor = caf::typed_actor<
    // Its timer, sent to itself: join the cluster or run the health check.
    caf::reacts_to<health_atom>>;

}  // namespace tgw::actors::node
