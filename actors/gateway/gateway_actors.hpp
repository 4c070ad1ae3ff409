#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/commands/command_atoms.hpp"
#include "actors/gateway/gateway_atoms.hpp"

/// The interfaces of the gateway's actors: a handle of one of these types takes only
/// the messages its interface names. The allowlist keeper is no actor: it tells
/// sessions through their interface. Others hold an actor by its public interface
/// (`<role>_actor`); what the actor also sends itself (its timers) is only in the
/// interface it runs with (`<role>_self_actor`), so no one else can send it.
namespace tgw::actors::gateway {

/// A device session (session.hpp). Its messages reach it in this order of likelihood:
/// the session looks for a message's kind in this order (session_actor_base.hpp).
using session_actor = caf::typed_actor<
    // A frame from the device's connection: its kind (codecs::frame_kind), its codec
    // and its bytes.
    caf::reacts_to<frame_atom, std::uint8_t, std::uint8_t, std::vector<std::uint8_t>>,
    // The telemetry writer's answer to the oldest packet the session sent it (with
    // ingest_atom): ACK it if it was stored.
    caf::reacts_to<persisted_atom, ports::write_outcome>,
    // The allowlist changed: disconnect the device if it is no longer admitted.
    caf::reacts_to<revoke_atom>,
    // The command reader hands the device a command; it is queued for the device.
    caf::reacts_to<commands::command_atom, ports::command_entry>,
    // The connection is gone, for this reason: journal it, unregister, stop.
    caf::reacts_to<closed_atom, std::string>>;

/// A session as it runs (session_actor_base.hpp): its public interface and its timer.
using session_self_actor = session_actor::extend<
    // Its own timer: the device did not answer the command of this entry id in time.
    caf::reacts_to<cmd_timeout_atom, std::string>>;

/// One shard of the telemetry writer (telemetry_writer.hpp).
using telemetry_writer_actor = caf::typed_actor<
    // A UDP device's packet; answered with how its write went.
    caf::replies_to<persist_atom, ports::packet_job>::with<ports::write_outcome>,
    // A journal event someone waits for; answered with how its write went.
    caf::replies_to<event_atom, ports::journal_event>::with<ports::write_outcome>,
    // A session's packet; the session hears how it went as (persisted_atom, outcome),
    // in arrival order.
    caf::reacts_to<ingest_atom, ports::packet_job>,
    // A journal event no one waits for; a failure is only logged.
    caf::reacts_to<note_atom, ports::journal_event>>;

/// A writer shard as it runs: its public interface and what it sends itself.
using telemetry_writer_self_actor = telemetry_writer_actor::extend<
    // Sent to itself behind the writes already queued: write them in one round trip.
    caf::reacts_to<flush_atom>,
    // Its timer: send again the writes it holds (write_outcome::retryable).
    caf::reacts_to<retry_atom>,
    // Its timer: look whether the persist failure spell has settled.
    caf::reacts_to<settle_atom>>;

/// Telemetry retention (retention_actor.hpp). Its only message is its own timer, so the
/// timer is its public interface too: CAF 0.17 has no typed handle with no message
/// ("Empty typed actor handle", caf/typed_actor.hpp) and a typed actor handles only
/// what its interface lists. Others hold the handle only to stop it.
using retention_actor = caf::typed_actor<
    // Its timer: read the streams' consumer groups and trim what they all acknowledged.
    caf::reacts_to<retain_atom>>;

/// UDP ingestion, one actor for every UDP device (udp_ingest.hpp).
using udp_ingest_actor = caf::typed_actor<
    // A datagram, how to answer its sender, and the sender as ip:port.
    caf::reacts_to<datagram_atom, std::vector<std::uint8_t>, ports::udp_reply, std::string>,
    // At shutdown: every UDP device is gone, for this reason.
    caf::reacts_to<closed_atom, std::string>>;

/// The UDP actor as it runs: its public interface and its timer.
using udp_ingest_self_actor = udp_ingest_actor::extend<
    // Its timer: devices silent for the idle timeout leave.
    caf::reacts_to<udp_sweep_atom>>;

}  // namespace tgw::actors::gateway
