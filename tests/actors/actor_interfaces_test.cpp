// The actors' interfaces are checked by the compiler: every handle is a typed_actor,
// spawning an actor's function gives its interface's handle, and a handle takes
// exactly the messages its interface names, with the answer it declares. Everything
// here is a static_assert; a file that compiles has passed.
#include <caf/all.hpp>
#include <caf/check_typed_input.hpp>
#include <caf/response_type.hpp>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "actors/commands/command_reader.hpp"
#include "actors/commands/command_responder.hpp"
#include "actors/gateway/retention_actor.hpp"
#include "actors/gateway/session.hpp"
#include "actors/gateway/session_directory.hpp"
#include "actors/gateway/telemetry_writer.hpp"
#include "actors/gateway/udp_ingest.hpp"
#include "actors/node/emitter.hpp"
#include "actors/node/membership.hpp"
#include "actors/node/worker.hpp"
#include "actors/registry/registry_actor.hpp"

namespace tgw::actors {
namespace {

using namespace gateway;
using commands::command_reader_actor;
using commands::command_responder_actor;
using commands::command_responder_self_actor;
using node::emitter_actor;
using node::membership_actor;
using node::role_actor;
using node::worker_actor;
using ports::journal_event;
using ports::packet_job;
using ports::write_outcome;
using registry::janitor_actor;
using registry::registry_actor;
using registry::registry_self_actor;
using bytes = std::vector<std::uint8_t>;

// Every handle is typed, none is CAF's dynamically typed caf::actor.
template <class T>
constexpr bool is_typed_handle = false;
template <class... Signatures>
constexpr bool is_typed_handle<caf::typed_actor<Signatures...>> = true;
static_assert(!is_typed_handle<caf::actor>);
template <class... Handles>
constexpr bool all_typed = (is_typed_handle<Handles> && ...);
static_assert(all_typed<session_actor, telemetry_writer_actor, retention_actor, udp_ingest_actor,
                        registry_actor, janitor_actor, command_reader_actor,
                        command_responder_actor, role_actor, emitter_actor, worker_actor,
                        membership_actor, session_self_actor, telemetry_writer_self_actor,
                        udp_ingest_self_actor, registry_self_actor, command_responder_self_actor>);
// So are the handles sessions are given and the ones the command reader finds.
static_assert(
    std::is_same_v<decltype(session_config::writers)::value_type, telemetry_writer_actor>);
static_assert(std::is_same_v<decltype(session_config::registry), registry_actor>);
static_assert(std::is_same_v<decltype(session_config::responder), command_responder_actor>);
static_assert(std::is_same_v<decltype(std::declval<session_directory>().find("")), session_actor>);
static_assert(std::is_same_v<decltype(std::declval<commands::session_lookup>().command_target("")),
                             commands::command_target_actor>);
// A session handle converts to the command reader's narrower one: the session's
// interface lists the command message the reader sends.
static_assert(std::is_convertible_v<session_actor, commands::command_target_actor>);

// Spawning each actor's function gives its interface's handle.
template <class Function, class Handle>
constexpr bool spawns = std::is_same_v<caf::infer_handle_from_fun_t<Function>, Handle>;
static_assert(spawns<decltype(&session), session_self_actor>);
static_assert(spawns<decltype(&telemetry_writer), telemetry_writer_self_actor>);
static_assert(spawns<decltype(&retention), retention_actor>);
static_assert(spawns<decltype(&udp_ingest), udp_ingest_self_actor>);
static_assert(spawns<decltype(&registry::registry), registry_self_actor>);
static_assert(spawns<decltype(&registry::janitor), janitor_actor>);
static_assert(spawns<decltype(&commands::command_reader), command_reader_actor>);
static_assert(spawns<decltype(&commands::command_responder), command_responder_self_actor>);
static_assert(spawns<decltype(&node::emitter), emitter_actor>);
static_assert(spawns<decltype(&node::worker), worker_actor>);
static_assert(spawns<decltype(&node::membership), membership_actor>);
// The session runs in its own actor class, not CAF's typed_event_based_actor.
static_assert(std::is_same_v<caf::infer_impl_from_fun_t<decltype(&session)>, session_actor_base>);

// What send() and request() check: whether `Handle` takes (Ts...).
template <class Handle, class... Ts>
constexpr bool takes = caf::response_type<caf::signatures_of_t<Handle>, Ts...>::valid;
// And what it answers.
template <class Handle, class... Ts>
using answer = typename caf::response_type<caf::signatures_of_t<Handle>, Ts...>::type;

static_assert(takes<session_actor, frame_atom, std::uint8_t, std::uint8_t, bytes>);
static_assert(takes<session_actor, persisted_atom, write_outcome>);
static_assert(!takes<session_actor, ingest_atom, packet_job>);  // the writer's
static_assert(!takes<session_actor, closed_atom, int>);         // wrong elements
static_assert(!takes<session_actor, frame_atom, std::uint8_t, bytes>);
static_assert(takes<caf::actor, ingest_atom, packet_job>);  // what an untyped handle allowed

static_assert(takes<telemetry_writer_actor, ingest_atom, packet_job>);
static_assert(std::is_same_v<answer<telemetry_writer_actor, ingest_atom, packet_job>,
                             caf::detail::type_list<void>>);
static_assert(std::is_same_v<answer<telemetry_writer_actor, event_atom, journal_event>,
                             caf::detail::type_list<write_outcome>>);
static_assert(!takes<telemetry_writer_actor, registry::register_atom, std::string>);

static_assert(std::is_same_v<answer<registry_actor, registry::unreg_all_atom>,
                             caf::detail::type_list<std::size_t>>);
static_assert(!takes<registry_actor, registry::sweep_atom>);  // the janitor's
static_assert(std::is_same_v<answer<command_responder_actor, commands::sync_atom>,
                             caf::detail::type_list<bool>>);
static_assert(!takes<command_responder_actor, commands::command_atom,
                     ports::command_entry>);  // a session's
static_assert(!takes<command_reader_actor, commands::flush_atom>);

// What an actor sends only to itself is in the interface it runs with, not in the one
// others hold: no other actor can send a session its timeout or a writer its flush.
static_assert(takes<session_self_actor, cmd_timeout_atom, std::string>);
static_assert(!takes<session_actor, cmd_timeout_atom, std::string>);
static_assert(takes<telemetry_writer_self_actor, flush_atom>);
static_assert(!takes<telemetry_writer_actor, flush_atom>);
static_assert(!takes<telemetry_writer_actor, retry_atom>);
static_assert(!takes<telemetry_writer_actor, settle_atom>);
static_assert(takes<udp_ingest_self_actor, udp_sweep_atom>);
static_assert(!takes<udp_ingest_actor, udp_sweep_atom>);
static_assert(takes<registry_self_actor, registry::beat_atom>);
static_assert(!takes<registry_actor, registry::beat_atom>);
static_assert(takes<command_responder_self_actor, commands::flush_atom>);
static_assert(!takes<command_responder_actor, commands::flush_atom>);
static_assert(!takes<command_responder_actor, commands::retry_atom>);
static_assert(!takes<command_responder_actor, commands::settle_atom>);
static_assert(!takes<role_actor, node::emit_atom, std::uint64_t>);
// And a handle of the one converts to the other, so the handle spawn gives is the one
// others are given.
static_assert(std::is_convertible_v<session_self_actor, session_actor>);
static_assert(std::is_convertible_v<telemetry_writer_self_actor, telemetry_writer_actor>);
static_assert(std::is_convertible_v<udp_ingest_self_actor, udp_ingest_actor>);
static_assert(std::is_convertible_v<registry_self_actor, registry_actor>);
static_assert(std::is_convertible_v<command_responder_self_actor, command_responder_actor>);

// The membership actor tells both roles through the interface they share.
static_assert(std::is_convertible_v<emitter_actor, role_actor>);
static_assert(std::is_convertible_v<worker_actor, role_actor>);
static_assert(!takes<role_actor, node::take_atom>);

// CAF 0.17 builds a stateful actor's state as State(self) whenever that compiles, and
// under C++20 an aggregate compiles from any argument its first member converts from:
// a state whose first member is a bool would start out true. Every state is built
// from nothing.
template <class Handle, class State>
inline constexpr bool built_from_nothing =
    !std::is_constructible_v<State, typename Handle::template stateful_pointer<State>>;
static_assert(built_from_nothing<telemetry_writer_self_actor, writer_state>);
static_assert(built_from_nothing<udp_ingest_self_actor, udp_state>);
static_assert(built_from_nothing<registry_self_actor, registry::registry_state>);
static_assert(built_from_nothing<command_reader_actor, commands::reader_state>);
static_assert(built_from_nothing<command_responder_self_actor, commands::responder_state>);
static_assert(built_from_nothing<membership_actor, node::membership_state>);
static_assert(built_from_nothing<emitter_actor, node::emitter_state>);
static_assert(built_from_nothing<worker_actor, node::worker_state>);

}  // namespace
}  // namespace tgw::actors
