#include "actors/gateway/session.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/commands/command_atoms.hpp"
#include "actors/commands/device_commands.hpp"
#include "actors/domain/packet_rendering.hpp"
#include "actors/gateway/gateway_atoms.hpp"
#include "actors/gateway/session_directory.hpp"
#include "actors/registry/registry_actors.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/device_conversation.hpp"
#include "codecs/imei.hpp"
#include "infra/log/log_budget.hpp"
#include "infra/log/refusal_log.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::gateway {
namespace {

using infra::log_budget;
using infra::log_kind;
using infra::refusal_log;
using infra::metrics::refusal;
using ports::journal_event;
using ports::write_outcome;

// A session's own lines, within the budgets of their causes: a reconnect storm or a
// flood of short sessions is a few lines an interval, and counters say the rest.
log_budget& connected_log() {
  static log_budget budget{"device connected", log_kind::session};
  return budget;
}
log_budget& disconnected_log() {
  static log_budget budget{"device disconnected", log_kind::session};
  return budget;
}
log_budget& frame_rejected_log() {
  static log_budget budget{"frame rejected", log_kind::refusal};
  return budget;
}

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
  /// The IMEI is being checked against the store and the budgets.
  bool identifying = false;
  /// The session asked its connection to close: what still comes is not looked at.
  bool closing = false;
  /// Packets at the writer, oldest first; its answers come in the same order. Their
  /// ACKs are owed: a command waits for none to be left, so it never lands between a
  /// packet and its ACK.
  std::vector<pending_packet> persisting;
  commands::device_commands commands;
  /// A command whose dispatch is journaled but that waits for AVL ACKs to be written.
  struct waiting_command {
    std::vector<std::uint8_t> frame;
    std::string entry_id;
  };
  /// What a session needs only now and then: a command waiting for ACKs to be written,
  /// frames that failed to decode, AVL frames that came while the IMEI was being
  /// checked. Behind one pointer, made the first time, so an idle session carries none
  /// of their buffers.
  struct unusual {
    explicit unusual(std::uint32_t max_bad) : bad(max_bad) {}
    std::unique_ptr<waiting_command> command_waiting;
    codecs::bad_frame_budget bad;
    std::vector<std::vector<std::uint8_t>> early_frames;
  };
  std::unique_ptr<unusual> trouble;
  std::uint64_t packets = 0;
  std::uint64_t records = 0;
  std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
};

class session_listener final : public ports::connection_listener {
 public:
  explicit session_listener(session_actor session) : session_(std::move(session)) {}
  void on_frame(const codecs::frame& f) override {
    caf::anon_send(session_, frame_atom::value, static_cast<std::uint8_t>(f.kind), f.codec,
                   std::vector<std::uint8_t>(f.bytes.begin(), f.bytes.end()));
  }
  void on_closed(const std::string& reason) override {
    caf::anon_send(session_, closed_atom::value, reason);
  }

 private:
  session_actor session_;
};

const telemetry_writer_actor& writer_for(const session_config& config, const std::string& imei) {
  return config.writers[std::hash<std::string>{}(imei) % config.writers.size()];
}

/// A session's state and what it does. The actor owns it (an attachable, run after the
/// actor's last message) and its default handler holds a plain pointer to it.
class session_context {
 public:
  session_context(session_actor_base* self, std::shared_ptr<ports::device_link> link,
                  std::shared_ptr<const session_config> config)
      : self_(self),
        link_(std::move(link)),
        config_(std::move(config)),
        state_(config_->command_queue_limit) {}

  // The session interface's messages (session_actor_base::deliver_to), one each.
  void operator()(frame_atom, std::uint8_t kind, std::uint8_t codec,
                  const std::vector<std::uint8_t>& bytes) {
    on_frame(kind, codec, bytes);
  }
  void operator()(persisted_atom, const write_outcome& o) { on_persisted(o); }
  void operator()(revoke_atom) { on_revoke(); }
  void operator()(commands::command_atom, const ports::command_entry& e) {
    on_command(e);  // a copy: commands are rare, and a message may be shared
  }
  void operator()(cmd_timeout_atom, const std::string& entry_id) { on_command_timeout(entry_id); }
  void operator()(closed_atom, const std::string& reason) { on_closed(reason); }

 private:
  void on_frame(std::uint8_t kind, std::uint8_t codec, const std::vector<std::uint8_t>& bytes) {
    // Frames the connection read before the close took effect: none is finished, so
    // the connection stops reading at its bound of frames in flight meanwhile.
    if (state_.closing) return;
    if (static_cast<codecs::frame_kind>(kind) != codecs::frame_kind::imei &&
        static_cast<codecs::frame_kind>(kind) != codecs::frame_kind::keepalive)
      counters().frames_by_codec[codec].fetch_add(1, std::memory_order_relaxed);
    switch (static_cast<codecs::frame_kind>(kind)) {
      case codecs::frame_kind::imei:
        on_imei(bytes);
        link_->frame_done();
        break;
      case codecs::frame_kind::keepalive:
        // Connections count keepalives where they arrive; a link that delivers one
        // anyway (a replay) has it counted here.
        counters().keepalives.fetch_add(1);
        break;
      case codecs::frame_kind::avl:
        on_avl(bytes);
        break;
      case codecs::frame_kind::command:
        // Codec 12/13/14 from the device are never answered with an AVL ACK; they
        // may answer the command in flight.
        counters().frames_command.fetch_add(1);
        if (auto r = state_.commands.on_reply(bytes)) {
          spdlog::info("device {}: command {} {}{}", state_.imei, r->entry.command_id,
                       r->outcome.status,
                       r->outcome.failure_reason.empty() ? "" : ": " + r->outcome.failure_reason);
          resolve(std::move(*r));
          next_command();
        } else {
          spdlog::debug("device {}: codec {} message ({} bytes) answers no command", state_.imei,
                        codecs::codec_name(codec), bytes.size());
        }
        link_->frame_done();
        break;
    }
  }

  // The writer's answer for the oldest packet in flight: ACK it only if it was stored
  // (or recognised as a resend); otherwise release the frame unanswered, and the
  // device resends it later.
  void on_persisted(const write_outcome& o) {
    if (state_.persisting.empty()) return;  // Cannot happen: one answer per packet.
    const pending_packet p = state_.persisting.front();
    state_.persisting.erase(state_.persisting.begin());
    counters().persist_in_flight.fetch_sub(1);
    if (o.ok) {
      if (o.duplicate)
        counters().packets_duplicate.fetch_add(1);
      else
        counters().records_persisted.fetch_add(p.records);
      ++state_.packets;
      state_.records += p.records;
      const auto ack = codecs::avl_ack(p.records);
      link_->answer_frame({ack.begin(), ack.end()});
      counters().acks_sent.fetch_add(1);
      counters().ack_latency.observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - p.received).count());
    } else {
      (o.under_replicated ? counters().persist_failures_replicas : counters().persist_failures)
          .fetch_add(1);
      spdlog::debug("device {}: packet not persisted ({}); no ACK", state_.imei, o.error);
      link_->frame_done();
    }
    write_command();
    next_command();
  }

  void on_revoke() {
    if (!state_.identified || !config_->allowlist || config_->allowlist->admits(state_.imei))
      return;
    counters().allowlist_disconnects.fetch_add(1);
    spdlog::warn("device {}: no longer in the allowlist; disconnecting ({})", state_.imei,
                 link_->peer());
    // The close comes back as closed_atom, which journals the disconnection with
    // this reason and unregisters the device.
    close_link("imei no longer allowed");
  }

  void on_command(ports::command_entry e) {
    if (auto full = state_.commands.enqueue(std::move(e))) {
      spdlog::warn("device {}: command {} refused: write_queue_full", state_.imei,
                   full->entry.command_id);
      resolve(std::move(*full));
      return;
    }
    next_command();
  }

  void on_command_timeout(const std::string& entry_id) {
    if (auto r = state_.commands.on_timeout(entry_id)) {
      spdlog::warn("device {}: command {} got no answer in time", state_.imei, r->entry.command_id);
      resolve(std::move(*r));
      next_command();
    }
  }

  void on_closed(const std::string& reason) {
    // Packets still at the writer are written, but no one is left to ACK them: the
    // device resends them, and the resend is recognised.
    counters().persist_in_flight.fetch_sub(static_cast<std::int64_t>(state_.persisting.size()));
    state_.persisting.clear();
    for (auto& r : state_.commands.on_closed()) resolve(std::move(r));
    if (state_.identified && config_->directory)
      config_->directory->detach(state_.imei, session_actor{self_});
    if (state_.identified) {
      if (config_->registry)
        self_->send(config_->registry, registry::unregister_atom::value, state_.imei);
      disconnected_log().log(spdlog::level::info,
                             "device {}: disconnected ({}) after {} packets, {} records",
                             state_.imei, reason, state_.packets, state_.records);
      end_rejected_spell();
      record_event("disconnected", 0, {{"reason", reason}});
    } else if (state_.identifying) {
      // Gone while its IMEI was being checked: its `identified` may be written by now
      // (a known device, or a new one on a token), and then the journal must say it
      // left. Written for a known device only, so an unknown one still makes no key.
      journal_event e{state_.imei, "disconnected", 0, {{"reason", reason}}};
      e.known_only = true;
      self_->send(writer_for(*config_, state_.imei), note_atom::value, std::move(e));
    }
    self_->quit();
  }

  // Asks the connection to close; the close comes back as closed_atom.
  void close_link(std::string reason) {
    state_.closing = true;
    link_->close(std::move(reason));
  }

  [[nodiscard]] bool command_waiting() const {
    return state_.trouble && state_.trouble->command_waiting;
  }

  session_state::unusual& unusual() {
    if (!state_.trouble)
      state_.trouble = std::make_unique<session_state::unusual>(config_->max_bad_frames);
    return *state_.trouble;
  }

  // A run of frames that failed to decode is one journal event, written when it ends
  // (a frame decodes, or the device leaves): a flood of bad frames costs the journal
  // one entry, not one a frame.
  void end_rejected_spell() {
    if (!state_.trouble) return;
    const auto spell = state_.trouble->bad.end_spell();
    if (!spell) return;
    record_event("frame_rejected", -1,
                 {{"error", std::string(codecs::to_string(spell->first_error))},
                  {"offset", std::to_string(spell->first_offset)},
                  {"size", std::to_string(spell->first_size)},
                  {"frames", std::to_string(spell->frames)}});
  }

  // Through the configuration rather than a reference of its own: 8 bytes a session,
  // and the context stays in its size class (see below).
  infra::metrics::gateway_counters& counters() const { return *config_->counters; }

  // Fire-and-forget journal events: a failure must not hold the device up (the writer
  // logs a Redis outage).
  void record_event(std::string type, int online,
                    std::vector<std::pair<std::string, std::string>> f) {
    if (!state_.identified) return;
    journal_event e{state_.imei, std::move(type), online, std::move(f)};
    self_->send(writer_for(*config_, state_.imei), note_atom::value, std::move(e));
  }

  void resolve(commands::resolved_command r) const {
    if (config_->responder)
      caf::anon_send(config_->responder, commands::resolve_atom::value, std::move(r.entry),
                     std::move(r.outcome));
  }

  // Writes a journaled command frame unless AVL ACKs are owed, then starts its timer.
  void write_command() {
    if (!command_waiting() || !state_.persisting.empty()) return;
    const auto waiting = std::move(state_.trouble->command_waiting);
    link_->send(std::move(waiting->frame));
    counters().commands_written.fetch_add(1, std::memory_order_relaxed);
    self_->delayed_send(self_, config_->command_timeout, cmd_timeout_atom::value,
                        std::move(waiting->entry_id));
  }

  // Starts the next queued command if the device is free: write it now, or once the
  // AVL ACKs owed are written.
  void next_command() {
    if (!state_.handshake_answered || !config_->responder || command_waiting()) return;
    std::vector<commands::resolved_command> expired;
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    auto entry = state_.commands.next(state_.persisting.size(), now_s, expired);
    for (auto& r : expired) resolve(std::move(r));
    if (!entry) return;
    std::string why;
    auto frame = commands::device_commands::encode(*entry, state_.device, why);
    if (frame.empty()) {
      if (auto r = state_.commands.on_timeout(entry->entry_id)) {
        r->outcome.failure_reason = why;
        resolve(std::move(*r));
      }
      return;
    }
    // command_dispatched is already in the journal: the reader appends it before it
    // hands a command to its session, so the write follows no extra round trip.
    unusual().command_waiting = std::make_unique<session_state::waiting_command>(
        session_state::waiting_command{std::move(frame), entry->entry_id});
    write_command();
  }

  void on_imei(const std::vector<std::uint8_t>& bytes) {
    codecs::imei id;
    const codecs::decode_status s = codecs::parse_imei_packet(bytes, id);
    if (!s.ok()) {
      counters().handshakes_rejected.fetch_add(1);
      counters().refusals.count(refusal::bad_handshake);
      refusal_log(refusal::bad_handshake)
          .log(spdlog::level::warn, "device {}: bad handshake: {}", link_->peer(),
               codecs::to_string(s.code));
      link_->send({codecs::imei_rejected});
      close_link("bad handshake");
      return;
    }
    state_.imei = std::string(id.str());
    state_.device = id;
    if (config_->allowlist && !config_->allowlist->admits(state_.imei)) {
      counters().handshakes_rejected.fetch_add(1);
      counters().refusals.count(refusal::allowlist);
      refusal_log(refusal::allowlist)
          .log(spdlog::level::warn, "device {}: not in the allowlist; rejected ({})", state_.imei,
               link_->peer());
      link_->send({codecs::imei_rejected});
      close_link("imei not allowed");
      return;
    }
    state_.identifying = true;
    journal_identified(true);
  }

  // The event is journaled before the device sees the verdict. A device the store
  // does not know yet costs its address a new-device token, asked for only then: the
  // first attempt writes only for a known device. If Redis is down the device is
  // accepted anyway: its data will simply not be ACKed until Redis returns.
  void journal_identified(bool known_only) {
    journal_event e{state_.imei, "identified", 1, {{"peer", link_->peer()}}};
    if (!link_->via().empty()) e.fields.emplace_back("via", link_->via());
    e.known_only = known_only;
    self_
        ->request(writer_for(*config_, state_.imei), caf::duration{caf::infinite},
                  event_atom::value, std::move(e))
        .then(
            // The context lives as long as the actor, and a response handler runs
            // only while the actor does.
            [this](const write_outcome& o) {
              if (o.ok && o.unknown_device) {
                if (link_->admit_new_device()) {
                  journal_identified(false);
                } else {
                  refuse_new_device();
                }
                return;
              }
              // The writer's persist log says why at warn, once per outage rather
              // than once per device.
              if (!o.ok)
                spdlog::debug("device {}: identified event not journaled: {}", state_.imei,
                              o.error);
              identified();
            },
            [this](const caf::error&) {
              spdlog::warn("device {}: identified event timed out", state_.imei);
              identified();
            });
  }

  void refuse_new_device() {
    state_.identifying = false;
    counters().handshakes_rejected.fetch_add(1);
    counters().refusals.count(refusal::new_device);
    refusal_log(refusal::new_device)
        .log(spdlog::level::warn,
             "device {}: rejected: a new device, and its address ({}) has no new-device token "
             "left (--new-devices-per-hour; an allowlist admits known fleets without one)",
             state_.imei, link_->peer());
    link_->send({codecs::imei_rejected});
    close_link("new-device budget spent");
  }

  void identified() {
    state_.identifying = false;
    state_.identified = true;
    // Registration happens here, on the session's lifecycle, never per frame.
    if (config_->registry)
      self_->send(config_->registry, registry::register_atom::value, state_.imei);
    if (config_->directory) config_->directory->attach(state_.imei, session_actor{self_});
    // Commands queued while the device was offline now come through our stream.
    if (config_->responder)
      self_->send(config_->responder, commands::drain_off_atom::value, state_.imei);
    counters().handshakes_accepted.fetch_add(1);
    connected_log().log(spdlog::level::info, "device {}: connected from {}", state_.imei,
                        link_->peer());
    answer_handshake();
    // Packets a device sent before its 01 go on, in order.
    if (state_.trouble) {
      auto early = std::move(state_.trouble->early_frames);
      for (const auto& frame : early) on_avl(frame);
    }
  }

  void answer_handshake() {
    link_->send({codecs::imei_accepted});
    state_.handshake_answered = true;
    next_command();
  }

  void on_avl(const std::vector<std::uint8_t>& bytes) {
    if (state_.identifying) {
      // Its IMEI is being checked; the connection's bound on frames in flight keeps
      // these few.
      unusual().early_frames.push_back(bytes);
      return;
    }
    counters().frames_avl.fetch_add(1);
    if (!state_.identified) {
      link_->frame_done();
      close_link("data before handshake");
      return;
    }
    // One packet buffer per scheduler thread: decoding allocates nothing once warm.
    thread_local codecs::avl_packet packet;
    const codecs::decode_status s = codecs::decode_avl_frame(bytes, packet, config_->crc);
    if (!s.ok()) {
      counters().frames_rejected.fetch_add(1);
      const auto code = static_cast<std::size_t>(s.code);
      if (code < counters().frames_rejected_by_error.size())
        counters().frames_rejected_by_error[code].fetch_add(1, std::memory_order_relaxed);
      frame_rejected_log().log(spdlog::level::warn,
                               "device {}: frame rejected: {} at offset {} ({} bytes); no ACK",
                               state_.imei, codecs::to_string(s.code), s.offset, bytes.size());
      if (!unusual().bad.rejected(s, bytes.size())) {
        link_->frame_done();
      } else {
        counters().refusals.count(refusal::bad_frames);
        refusal_log(refusal::bad_frames)
            .log(spdlog::level::warn,
                 "device {}: {} frames failed to decode; closing (--max-bad-frames)", state_.imei,
                 state_.trouble->bad.bad());
        // The close comes back as closed_atom, which journals the spell.
        close_link("too many bad frames (" + std::to_string(state_.trouble->bad.bad()) +
                   "), the last " + std::string(codecs::to_string(s.code)));
      }
      return;
    }
    end_rejected_spell();
    auto job = domain::render_packet(state_.imei, packet, bytes);
    counters().persist_in_flight.fetch_add(1);
    state_.persisting.push_back(
        {static_cast<std::uint32_t>(packet.records.size()), std::chrono::steady_clock::now()});
    self_->send(writer_for(*config_, state_.imei), ingest_atom::value, std::move(job));
  }

  session_actor_base* self_;
  std::shared_ptr<ports::device_link> link_;
  std::shared_ptr<const session_config> config_;
  session_state state_;
};

// Every device holds one: past 192 bytes it takes jemalloc's next class, 32 bytes more.
static_assert(sizeof(session_context) <= 192, "session_context outgrew its size class");

}  // namespace

std::unique_ptr<ports::connection_listener> make_session_listener(session_actor session) {
  return std::make_unique<session_listener>(std::move(session));
}

session_self_actor::behavior_type session(session_actor_base* self,
                                          const std::shared_ptr<ports::device_link>& link,
                                          const std::shared_ptr<const session_config>& config) {
  auto ctx = std::make_unique<session_context>(self, link, config);
  session_context* c = ctx.get();
  config->counters->sessions_open.fetch_add(1);
  // The actor owns the context until it terminates: its attachables run after its last
  // message, so the handler can hold a plain pointer. No shared_ptr: its control
  // block and enable_shared_from_this took the context to the next size class.
  self->attach_functor([counters = config->counters.get(), context = std::move(ctx)] {
    counters->sessions_open.fetch_sub(1);
  });
  return self->deliver_to(c);
}

}  // namespace tgw::actors::gateway
