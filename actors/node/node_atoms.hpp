#pragma once

#include <caf/atom.hpp>

/// The atoms of a cluster node's roles. All are local; none is serialized. What each
/// message means is said at the interface that takes it (node_actors.hpp).
namespace tgw::actors::node {

// Messages between actors.

/// (role_atom, bool is_emitter, int64 epoch): the membership actor's verdict.
using role_atom = caf::atom_constant<caf::atom("role")>;

// Messages an actor sends only to itself (its timers and its loop).

/// (health_atom): the membership actor's timer; time for the next health check.
using health_atom = caf::atom_constant<caf::atom("health")>;
/// (emit_atom, uint64 generation): the emitter's timer; time for the next emit. Carries
/// the generation of the activation that scheduled it, so stale ones are dropped.
using emit_atom = caf::atom_constant<caf::atom("emit")>;
/// (take_atom): the worker polls the queue once.
using take_atom = caf::atom_constant<caf::atom("take")>;
/// (done_atom, std::string message): the worker's handler finished a message; whether
/// it failed is still to be drawn.
using done_atom = caf::atom_constant<caf::atom("done")>;
/// (finish_atom, std::string message, bool failed): the worker records the message's
/// outcome in the store (again later while Redis is unreachable).
using finish_atom = caf::atom_constant<caf::atom("finish")>;

}  // namespace tgw::actors::node
