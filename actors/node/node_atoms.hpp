#pragma once

#include <caf/atom.hpp>

/// Messages between the roles of a cluster node. All are local; none is serialized.
namespace tgw::actors::node {

/// Timer tick of a role; carries the tick generation so stale ticks are dropped.
using tick_atom = caf::atom_constant<caf::atom("tick")>;
/// (role_atom, bool is_emitter, int64 epoch): the membership actor's verdict.
using role_atom = caf::atom_constant<caf::atom("role")>;
/// (take_atom): the worker polls the queue once.
using take_atom = caf::atom_constant<caf::atom("take")>;
/// (done_atom, std::string message): the worker's handler finished a message.
using done_atom = caf::atom_constant<caf::atom("done")>;

}  // namespace tgw::actors::node
