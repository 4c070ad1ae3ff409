#include "actors/gateway/session_actor_base.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

namespace tgw::actors::gateway {
namespace {

// Never sent: the one case of the behaviour every session shares.
using hold_atom = caf::atom_constant<caf::atom("hold")>;

}  // namespace

void session_actor_base::initialize() {
  super::initialize();
  setf(is_initialized_flag);
  if (initial_behavior_fac_) {
    auto behaviour = initial_behavior_fac_(this);
    initial_behavior_fac_ = nullptr;
    if (behaviour) do_become(std::move(behaviour), true);
  }
}

caf::result<caf::message> session_actor_base::drop(caf::scheduled_actor* self,
                                                   caf::message_view& view) {
  spdlog::warn("session actor {}: unexpected message dropped: {}", self->id(),
               view.content().stringify());
  return caf::sec::unexpected_message;
}

session_actor_base::behavior_type session_actor_base::shared_behavior() {
  static const caf::behavior shared{[](hold_atom) {}};
  // Unchecked: it matches none of the interface's messages, which all go to the
  // default handler (deliver_to).
  return behavior_type{behavior_type::unsafe_init{}, shared};
}

// Every device holds one: a member that pushes it past 1,024 bytes with its control
// block costs each session the next size class, 256 bytes more.
static_assert(sizeof(caf::actor_storage<session_actor_base>) <= 1024,
              "the session actor outgrew jemalloc's 1,024-byte class");

}  // namespace tgw::actors::gateway
