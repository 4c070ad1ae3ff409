#pragma once

// Where tgw reaches into CAF's internals, all for the actors every packet passes
// through: the session actor (one a device) and the telemetry writer. Each piece below
// says what it saves. They depend on CAF 0.17.6's class layouts, its behaviour
// mixins and its unexported spawn traits, so they are checked against that version:
// another CAF has to be looked at here first (and re-measured with scripts/bench-idle).
#include <caf/config.hpp>

static_assert(CAF_VERSION == 1706,
              "actors/gateway/session_actor_base.hpp is written against CAF 0.17.6's "
              "internals; check every workaround in it against this CAF version");

#include <cstddef>
#include <utility>

#include <caf/actor_traits.hpp>
#include <caf/behavior.hpp>
#include <caf/extend.hpp>
#include <caf/fwd.hpp>
#include <caf/infer_handle.hpp>
#include <caf/logger.hpp>
#include <caf/message.hpp>
#include <caf/message_view.hpp>
#include <caf/mixin/behavior_changer.hpp>
#include <caf/mixin/requester.hpp>
#include <caf/mixin/sender.hpp>
#include <caf/replies_to.hpp>
#include <caf/result.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/type_erased_tuple.hpp>

#include "actors/gateway/gateway_actors.hpp"

namespace tgw::actors::gateway {

// 1. Leaving CAF's logger. CAF 0.17 notes which actor each thread runs in one map
// behind one spin lock (logger::thread_local_aid), and takes that lock about four
// times each time a thread resumes an actor, only so that its log lines can name the
// actor. Every thread that runs actors writes the lock's word, so with many cores it
// is a cache line that moves between them on every message. Debian builds CAF at log
// level QUIET, where CAF logs nothing, so the threads that run tgw's per-packet actors
// (sessions, telemetry writers) leave CAF's logger: CAF skips the bookkeeping on a
// thread without one. tgw's own logs go through spdlog.

/// Detaches the calling thread from CAF's logger when CAF is built not to log.
/// Cheap enough to call per message: after the first call it reads one pointer.
inline void leave_caf_logger() noexcept {
#if CAF_LOG_LEVEL == CAF_LOG_LEVEL_QUIET
  if (caf::logger::current_logger() != nullptr) caf::logger::set_current_actor_system(nullptr);
#endif
}

class session_actor_base;

}  // namespace tgw::actors::gateway

namespace caf {

// 2. The type of the session's behaviour, for the behavior_changer mixin, as CAF
// declares it for its own typed_event_based_actor.
template <>
class behavior_type_of<tgw::actors::gateway::session_actor_base> {
 public:
  using type = tgw::actors::gateway::session_self_actor::behavior_type;
};

// 3. What spawn(session, ...) makes: a session_self_actor handle, run by
// session_actor_base. CAF infers it alone only for a self pointer derived from
// typed_event_based_actor.
template <>
struct infer_handle_from_fun_impl<tgw::actors::gateway::session_self_actor::behavior_type,
                                  tgw::actors::gateway::session_actor_base*, true> {
  using type = tgw::actors::gateway::session_self_actor;
  using impl = tgw::actors::gateway::session_actor_base;
  using behavior_type = tgw::actors::gateway::session_self_actor::behavior_type;
  static constexpr spawn_mode mode = spawn_mode::function_with_selfptr;
};

}  // namespace caf

namespace tgw::actors::gateway {

namespace session_dispatch {

// Calls `handler` with the message's elements when they are exactly `Ts...`, as a CAF
// handler would be called. The types come from the interface, not from the handler's
// parameters: CAF recognises its built-in types (std::string among them) by a type
// number that a reference type does not carry, so `const std::string&` would never
// match. The elements are read only: a message may be shared by several receivers.
// Only messages without a reply (caf::reacts_to) have an overload: a session answers
// no request.
template <class Handler, class... Ts>
bool deliver_if(const caf::type_erased_tuple& xs, Handler& handler,
                caf::typed_mpi<caf::detail::type_list<Ts...>, caf::output_tuple<void>>*) {
  if (!xs.match_elements<Ts...>()) return false;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    handler(xs.get_as<Ts>(I)...);
  }
  (std::index_sequence_for<Ts...>{});
  return true;
}

// Tries the interface's messages in the order it declares them.
template <class Handler, class... Signatures>
bool deliver(const caf::type_erased_tuple& xs, Handler& handler,
             caf::detail::type_list<Signatures...>) {
  return (deliver_if(xs, handler, static_cast<Signatures*>(nullptr)) || ...);
}

}  // namespace session_dispatch

/// 4. The actor a session runs in: CAF's typed_event_based_actor for the session
/// interface, without group subscriptions. Sessions join no group, and the subscriber
/// mixin's `unordered_set` (56 bytes) is what put each of them, 1,080 bytes with its
/// control block, in jemalloc's 1,280-byte class; without it they fill the 1,024-byte
/// class exactly (docs/PERFORMANCE.md, "Idle memory").
///
/// 5. Its messages reach it through its default handler (deliver_to), not through a
/// behaviour of its own: a behaviour, six handlers each holding the session's context,
/// was 320 bytes a session. Every session shares one behaviour that matches nothing it
/// is sent, since an actor lives while it has a behaviour.
class session_actor_base final
    : public caf::extend<caf::scheduled_actor, session_actor_base>::with<
          caf::mixin::sender, caf::mixin::requester, caf::mixin::behavior_changer>,
      public caf::statically_typed_actor_base {
 public:
  using super = caf::extend<caf::scheduled_actor, session_actor_base>::with<
      caf::mixin::sender, caf::mixin::requester, caf::mixin::behavior_changer>;
  /// What `spawn` and the send functions read: the session interface, with the timer
  /// the session sends itself.
  using signatures = session_self_actor::signatures;
  using behavior_type = session_self_actor::behavior_type;
  using actor_hdl = session_self_actor;

  explicit session_actor_base(caf::actor_config& cfg) : super(cfg) {}

  /// As typed_event_based_actor::initialize: the function it was spawned with gives
  /// the behaviour, and is dropped once it has.
  void initialize() override;

  /// Hands every message of the session interface to `handler`, which has one
  /// `operator()` a message kind and lives as long as the actor; anything else is
  /// logged and dropped, as CAF's own default handler would. Returns the behaviour
  /// the spawn function returns. The handler holds one pointer: it fits in the
  /// default handler's inline space, so a session allocates nothing for it.
  template <class Handler>
  behavior_type deliver_to(Handler* handler) {
    set_default_handler([handler](caf::scheduled_actor* self, caf::message_view& view) {
      leave_caf_logger();
      if (session_dispatch::deliver(view.content(), *handler, signatures{}))
        return caf::result<caf::message>{caf::message{}};
      return drop(self, view);
    });
    return shared_behavior();
  }

 private:
  static caf::result<caf::message> drop(caf::scheduled_actor* self, caf::message_view& view);
  static behavior_type shared_behavior();
};

}  // namespace tgw::actors::gateway
