#include "actors/gateway/session.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/commands/command_messages.hpp"
#include "actors/commands/device_commands.hpp"
#include "actors/commands/session_directory.hpp"
#include "actors/gateway/gateway_messages.hpp"
#include "actors/registry/registry_actor.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/imei.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/telemetry/packet_rendering.hpp"

namespace tgw::actors::gateway {
namespace {

using infra::telemetry::journal_event;
using infra::telemetry::write_outcome;

/// A packet sent to the writer and not yet answered.
struct pending_packet {
  std::uint32_t records = 0;
  std::chrono::steady_clock::time_point received;
};

struct session_state {
  explicit session_state(std::size_t command_queue_limit) : commands(command_queue_limit) {}
  std::string imei;
  codecs::imei device;
  bool identified = false;
  /// The handshake's 01 is on its way to the device. Nothing else may be written
  /// before it, and commands can reach the session earlier: the offline queue is
  /// drained as soon as the device is identified, while the 01 waits for the journal.
  bool handshake_answered = false;
  /// Packets at the writer, oldest first; its answers come in the same order. Their
  /// ACKs are owed: a command waits for none to be left, so it never lands between a
  /// packet and its ACK.
  std::vector<pending_packet> persisting;
  commands::device_commands commands;
  /// A command whose dispatch is journaled but that waits for AVL ACKs to be written.
  std::vector<std::uint8_t> command_frame;
  std::string command_frame_id;
  std::uint64_t packets = 0;
  std::uint64_t records = 0;
  std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
};

class session_listener final : public infra::net::connection_listener {
 public:
  explicit session_listener(caf::actor session) : session_(std::move(session)) {}
  void on_frame(const codecs::frame& f) override {
    caf::anon_send(session_, frame_atom::value, static_cast<std::uint8_t>(f.kind), f.codec,
                   std::vector<std::uint8_t>(f.bytes.begin(), f.bytes.end()));
  }
  void on_closed(const std::string& reason) override {
    caf::anon_send(session_, closed_atom::value, reason);
  }

 private:
  caf::actor session_;
};

const caf::actor& writer_for(const session_config& config, const std::string& imei) {
  return config.writers[std::hash<std::string>{}(imei) % config.writers.size()];
}

}  // namespace

std::unique_ptr<infra::net::connection_listener> make_session_listener(caf::actor session) {
  return std::make_unique<session_listener>(std::move(session));
}

caf::behavior session(caf::event_based_actor* self,
                      const std::shared_ptr<infra::net::device_link>& link,
                      const std::shared_ptr<const session_config>& config) {
  auto state = std::make_shared<session_state>(config->command_queue_limit);
  auto& counters = *config->counters;
  counters.sessions_open.fetch_add(1);
  self->attach_functor([counters = config->counters] { counters->sessions_open.fetch_sub(1); });

  // Fire-and-forget journal events: a failure must not hold the device up (the writer
  // logs a Redis outage).
  auto record_event = [self, config, state](std::string type, int online,
                                            std::vector<std::pair<std::string, std::string>> f) {
    if (!state->identified) return;
    journal_event e{state->imei, std::move(type), online, std::move(f)};
    self->send(writer_for(*config, state->imei), note_atom::value, std::move(e));
  };

  auto resolve = [config](commands::resolved_command r) {
    if (config->responder)
      caf::anon_send(config->responder, commands::resolve_atom::value, std::move(r.entry),
                     std::move(r.outcome));
  };

  // Writes a journaled command frame unless AVL ACKs are owed, then starts its timer.
  auto write_command = [self, link, config, state, &counters] {
    if (state->command_frame.empty() || !state->persisting.empty()) return;
    link->send(std::move(state->command_frame));
    state->command_frame.clear();
    counters.commands_written.fetch_add(1, std::memory_order_relaxed);
    self->delayed_send(self, config->command_timeout, commands::cmd_timeout_atom::value,
                       state->command_frame_id);
  };

  // Starts the next queued command if the device is free: write it now, or once the
  // AVL ACKs owed are written.
  auto next_command = [config, state, resolve, write_command] {
    if (!state->handshake_answered || !config->responder || !state->command_frame.empty()) return;
    std::vector<commands::resolved_command> expired;
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    auto entry = state->commands.next(state->persisting.size(), now_s, expired);
    for (auto& r : expired) resolve(std::move(r));
    if (!entry) return;
    std::string why;
    auto frame = commands::device_commands::encode(*entry, state->device, why);
    if (frame.empty()) {
      if (auto r = state->commands.on_timeout(entry->entry_id)) {
        r->outcome.failure_reason = why;
        resolve(std::move(*r));
      }
      return;
    }
    // command_dispatched is already in the journal: the reader appends it before it
    // hands a command to its session, so the write follows no extra round trip.
    state->command_frame = std::move(frame);
    state->command_frame_id = entry->entry_id;
    write_command();
  };

  auto on_imei = [self, link, config, state, &counters,
                  next_command](const std::vector<std::uint8_t>& bytes) {
    codecs::imei id;
    const codecs::decode_status s = codecs::parse_imei_packet(bytes, id);
    if (!s.ok()) {
      counters.handshakes_rejected.fetch_add(1);
      spdlog::warn("device {}: bad handshake: {}", link->peer(), codecs::to_string(s.code));
      link->send({codecs::imei_rejected});
      link->close("bad handshake");
      return;
    }
    state->imei = std::string(id.str());
    state->device = id;
    if (config->allowlist && !config->allowlist->admits(state->imei)) {
      counters.handshakes_rejected.fetch_add(1);
      spdlog::warn("device {}: not in the allowlist; rejected ({})", state->imei, link->peer());
      link->send({codecs::imei_rejected});
      link->close("imei not allowed");
      return;
    }
    state->identified = true;
    // Registration happens here, on the session's lifecycle, never per frame.
    if (config->registry) self->send(config->registry, registry::register_atom::value, state->imei);
    if (config->directory)
      config->directory->attach(state->imei, caf::actor_cast<caf::actor>(self));
    // Commands queued while the device was offline now come through our stream.
    if (config->responder)
      self->send(config->responder, commands::drain_off_atom::value, state->imei);
    journal_event e{state->imei, "identified", 1, {{"peer", link->peer()}}};
    if (!link->via().empty()) e.fields.emplace_back("via", link->via());
    // The event is journaled before the device sees the verdict. If Redis is down the
    // device is accepted anyway: its data will simply not be ACKed until Redis returns.
    self->request(writer_for(*config, state->imei), caf::duration{caf::infinite}, event_atom::value,
                  std::move(e))
        .then(
            [link, state, &counters, next_command](const write_outcome& o) {
              if (!o.ok)
                spdlog::warn("device {}: identified event not journaled: {}", state->imei, o.error);
              counters.handshakes_accepted.fetch_add(1);
              spdlog::info("device {}: connected from {}", state->imei, link->peer());
              link->send({codecs::imei_accepted});
              state->handshake_answered = true;
              next_command();
            },
            [link, state, next_command](const caf::error&) {
              spdlog::warn("device {}: identified event timed out", state->imei);
              link->send({codecs::imei_accepted});
              state->handshake_answered = true;
              next_command();
            });
  };

  auto on_avl = [self, link, config, state, &counters,
                 record_event](const std::vector<std::uint8_t>& bytes) {
    counters.frames_avl.fetch_add(1);
    if (!state->identified) {
      link->frame_done();
      link->close("data before handshake");
      return;
    }
    // One packet buffer per scheduler thread: decoding allocates nothing once warm.
    thread_local codecs::avl_packet packet;
    const codecs::decode_status s = codecs::decode_avl_frame(bytes, packet, config->crc);
    if (!s.ok()) {
      counters.frames_rejected.fetch_add(1);
      const auto code = static_cast<std::size_t>(s.code);
      if (code < counters.frames_rejected_by_error.size())
        counters.frames_rejected_by_error[code].fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("device {}: frame rejected: {} at offset {} ({} bytes); no ACK", state->imei,
                   codecs::to_string(s.code), s.offset, bytes.size());
      record_event("frame_rejected", -1,
                   {{"error", std::string(codecs::to_string(s.code))},
                    {"offset", std::to_string(s.offset)},
                    {"size", std::to_string(bytes.size())}});
      link->frame_done();
      return;
    }
    auto job = infra::telemetry::render_packet(state->imei, packet, bytes);
    counters.persist_in_flight.fetch_add(1);
    state->persisting.push_back(
        {static_cast<std::uint32_t>(packet.records.size()), std::chrono::steady_clock::now()});
    self->send(writer_for(*config, state->imei), ingest_atom::value, std::move(job));
  };

  // The writer's answer for the oldest packet in flight: ACK it only if it was stored
  // (or recognised as a resend); otherwise release the frame unanswered, and the
  // device resends it later.
  auto on_persisted = [link, state, &counters, write_command,
                       next_command](const write_outcome& o) {
    if (state->persisting.empty()) return;  // Cannot happen: one answer per packet.
    const pending_packet p = state->persisting.front();
    state->persisting.erase(state->persisting.begin());
    counters.persist_in_flight.fetch_sub(1);
    if (o.ok) {
      if (o.duplicate)
        counters.packets_duplicate.fetch_add(1);
      else
        counters.records_persisted.fetch_add(p.records);
      ++state->packets;
      state->records += p.records;
      const auto ack = codecs::avl_ack(p.records);
      link->answer_frame({ack.begin(), ack.end()});
      counters.acks_sent.fetch_add(1);
      counters.ack_latency.observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - p.received).count());
    } else {
      (o.under_replicated ? counters.persist_failures_replicas : counters.persist_failures)
          .fetch_add(1);
      spdlog::debug("device {}: packet not persisted ({}); no ACK", state->imei, o.error);
      link->frame_done();
    }
    write_command();
    next_command();
  };

  return {
      [=, &counters](frame_atom, std::uint8_t kind, std::uint8_t codec,
                     const std::vector<std::uint8_t>& bytes) {
        if (static_cast<codecs::frame_kind>(kind) != codecs::frame_kind::imei &&
            static_cast<codecs::frame_kind>(kind) != codecs::frame_kind::keepalive)
          counters.frames_by_codec[codec].fetch_add(1, std::memory_order_relaxed);
        switch (static_cast<codecs::frame_kind>(kind)) {
          case codecs::frame_kind::imei:
            on_imei(bytes);
            break;
          case codecs::frame_kind::keepalive:
            counters.keepalives.fetch_add(1);
            break;
          case codecs::frame_kind::avl:
            on_avl(bytes);
            break;
          case codecs::frame_kind::command:
            // Codec 12/13/14 from the device are never answered with an AVL ACK; they
            // may answer the command in flight.
            counters.frames_command.fetch_add(1);
            if (auto r = state->commands.on_reply(bytes)) {
              spdlog::info(
                  "device {}: command {} {}{}", state->imei, r->entry.command_id, r->outcome.status,
                  r->outcome.failure_reason.empty() ? "" : ": " + r->outcome.failure_reason);
              resolve(std::move(*r));
              next_command();
            } else {
              spdlog::debug("device {}: codec {} message ({} bytes) answers no command",
                            state->imei, codecs::codec_name(codec), bytes.size());
            }
            break;
        }
      },
      [on_persisted](persisted_atom, const write_outcome& o) { on_persisted(o); },
      [link, config, state, &counters](revoke_atom) {
        if (!state->identified || !config->allowlist || config->allowlist->admits(state->imei))
          return;
        counters.allowlist_disconnects.fetch_add(1);
        spdlog::warn("device {}: no longer in the allowlist; disconnecting ({})", state->imei,
                     link->peer());
        // The close comes back as closed_atom, which journals the disconnection with
        // this reason and unregisters the device.
        link->close("imei no longer allowed");
      },
      [state, resolve, next_command](commands::command_atom, infra::commands::command_entry& e) {
        if (auto full = state->commands.enqueue(std::move(e))) {
          spdlog::warn("device {}: command {} refused: write_queue_full", state->imei,
                       full->entry.command_id);
          resolve(std::move(*full));
          return;
        }
        next_command();
      },
      [state, resolve, next_command](commands::cmd_timeout_atom, const std::string& entry_id) {
        if (auto r = state->commands.on_timeout(entry_id)) {
          spdlog::warn("device {}: command {} got no answer in time", state->imei,
                       r->entry.command_id);
          resolve(std::move(*r));
          next_command();
        }
      },
      [self, config, state, record_event, resolve, &counters](closed_atom,
                                                              const std::string& reason) {
        // Packets still at the writer are written, but no one is left to ACK them: the
        // device resends them, and the resend is recognised.
        counters.persist_in_flight.fetch_sub(static_cast<std::int64_t>(state->persisting.size()));
        state->persisting.clear();
        for (auto& r : state->commands.on_closed()) resolve(std::move(r));
        if (state->identified && config->directory)
          config->directory->detach(state->imei, caf::actor_cast<caf::actor>(self));
        if (state->identified) {
          if (config->registry)
            self->send(config->registry, registry::unregister_atom::value, state->imei);
          spdlog::info("device {}: disconnected ({}) after {} packets, {} records", state->imei,
                       reason, state->packets, state->records);
          record_event("disconnected", 0, {{"reason", reason}});
        }
        self->quit();
      },
  };
}

}  // namespace tgw::actors::gateway
