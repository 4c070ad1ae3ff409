#include "actors/gateway/udp_ingest.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/domain/packet_rendering.hpp"
#include "actors/gateway/gateway_atoms.hpp"
#include "codecs/udp.hpp"
#include "infra/log/log_budget.hpp"
#include "infra/log/refusal_log.hpp"
#include "infra/metrics/gateway_counters.hpp"

namespace tgw::actors::gateway {
namespace {

using clock = std::chrono::steady_clock;
using infra::log_budget;
using infra::log_kind;
using infra::refusal_log;
using infra::metrics::refusal;
using ports::journal_event;
using ports::packet_job;
using ports::write_outcome;

const telemetry_writer_actor& writer_for(const session_config& config, const std::string& imei) {
  return config.writers[std::hash<std::string>{}(imei) % config.writers.size()];
}

log_budget& presence_log() {
  static log_budget budget{"udp device present or gone", log_kind::session};
  return budget;
}

/// A datagram's packet, rendered and waiting for its device to be known.
struct udp_packet {
  packet_job job;
  ports::udp_reply reply;
  codecs::udp_header header;
  std::uint8_t records = 0;
};

}  // namespace

udp_ingest_self_actor::behavior_type udp_ingest(
    udp_ingest_self_actor::stateful_pointer<udp_state> self,
    const std::shared_ptr<const session_config>& config, const udp_config& udp) {
  // The actor's own: its handlers run only while it does.
  udp_state* state = &self->state;
  state->new_devices =
      domain::token_bucket(udp.new_devices_per_hour / 3600.0, udp.new_devices_burst);
  const auto idle_timeout = udp.idle_timeout;
  // A device leaves between idle_timeout and 1.25 x idle_timeout after its last
  // datagram: a finer sweep would cost more wake-ups for no use to anyone.
  const auto sweep_every = std::max(idle_timeout / 4, std::chrono::milliseconds{50});

  // Fire-and-forget, as a session's events: a lost lifecycle event must not hold up
  // the device's records.
  auto record_event = [self, config](const std::string& imei, std::string type, int online,
                                     std::vector<std::pair<std::string, std::string>> f) {
    journal_event event{imei, std::move(type), online, std::move(f)};
    self->request(writer_for(*config, imei), caf::duration{caf::infinite}, event_atom::value,
                  std::move(event))
        .then(
            [imei](const write_outcome& o) {
              // The writer's persist log says why at warn, once per outage.
              if (!o.ok) spdlog::debug("udp device {}: event not journaled: {}", imei, o.error);
            },
            [imei](const caf::error& e) {
              spdlog::warn("udp device {}: event timed out ({})", imei, caf::to_string(e));
            });
  };

  auto persist = [self, config](udp_packet p) {
    const std::string imei = p.job.imei;
    config->counters->persist_in_flight.fetch_add(1);
    self->request(writer_for(*config, imei), caf::duration{caf::infinite}, persist_atom::value,
                  std::move(p.job))
        .then(
            [config, reply = std::move(p.reply), header = p.header,
             n = p.records](const write_outcome& o) {
              auto& c = *config->counters;
              c.persist_in_flight.fetch_sub(1);
              if (!o.ok) {
                (o.under_replicated ? c.persist_failures_replicas : c.persist_failures)
                    .fetch_add(1);
                return;
              }
              if (o.duplicate)
                c.packets_duplicate.fetch_add(1);
              else
                c.records_persisted.fetch_add(n);
              const auto response = codecs::udp_response(header.packet_id, header.avl_packet_id, n);
              reply({response.begin(), response.end()});
              c.acks_sent.fetch_add(1);
            },
            [config, imei](const caf::error& e) {
              config->counters->persist_in_flight.fetch_sub(1);
              config->counters->persist_failures.fetch_add(1);
              spdlog::warn("udp device {}: persist timed out ({})", imei, caf::to_string(e));
            });
  };

  // The device is present from now on: its records follow.
  auto present = [self, state, sweep_every](const std::string& imei, const std::string& peer) {
    state->last_seen[imei] = clock::now();
    presence_log().log(spdlog::level::info, "udp device {}: present, from {}", imei, peer);
    if (!state->sweep_scheduled) {
      state->sweep_scheduled = true;
      self->delayed_send(self, sweep_every, udp_sweep_atom::value);
    }
  };

  // The first datagram of a device not present: `identified` is journaled ahead of its
  // records, and only for a device the store knows, unless the new-device budget pays
  // for a new one. Its packet waits for the verdict.
  std::shared_ptr<std::function<void(std::string, bool, udp_packet)>> identify =
      std::make_shared<std::function<void(std::string, bool, udp_packet)>>();
  *identify = [self, config, state, persist, present, weak = std::weak_ptr(identify)](
                  std::string peer, bool known_only, udp_packet p) {
    const std::string imei = p.job.imei;
    journal_event event{imei, "identified", 1, {{"peer", peer}, {"transport", "udp"}}};
    event.known_only = known_only;
    self->request(writer_for(*config, imei), caf::duration{caf::infinite}, event_atom::value,
                  std::move(event))
        .then(
            [config, state, persist, present, weak, peer,
             p = std::move(p)](const write_outcome& o) {
              const std::string& device = p.job.imei;
              if (o.ok && o.unknown_device) {
                if (state->new_devices.take()) {
                  if (auto again = weak.lock()) (*again)(peer, false, p);
                  return;
                }
                state->identifying.erase(device);
                config->counters->refusals.count(refusal::new_device);
                refusal_log(refusal::new_device)
                    .log(spdlog::level::warn,
                         "udp device {}: ignored: a new device, and the UDP new-device budget is "
                         "spent (--udp-new-devices-per-hour; an allowlist admits known fleets "
                         "without one)",
                         device);
                return;
              }
              state->identifying.erase(device);
              // The writer's persist log says why at warn, once per outage; the device
              // is present anyway, as a TCP device is accepted while Redis is away.
              if (!o.ok) spdlog::debug("udp device {}: event not journaled: {}", device, o.error);
              present(device, peer);
              persist(p);
            },
            [state, imei](const caf::error& e) {
              state->identifying.erase(imei);
              spdlog::warn("udp device {}: identified event timed out ({})", imei,
                           caf::to_string(e));
            });
  };

  return {
      [config, state, udp, persist, identify](
          datagram_atom, const std::vector<std::uint8_t>& datagram, const ports::udp_reply& reply,
          const std::string& peer) {
        if (udp.backlog) udp.backlog->taken();
        auto& counters = *config->counters;
        counters.frames_avl.fetch_add(1);
        thread_local codecs::avl_packet packet;
        codecs::udp_header header;
        const codecs::decode_status s = codecs::decode_udp_datagram(datagram, header, packet);
        if (!s.ok()) {
          counters.frames_rejected.fetch_add(1);
          counters.refusals.count(refusal::udp_bad_datagram);
          refusal_log(refusal::udp_bad_datagram)
              .log(
                  spdlog::level::warn,
                  "udp device {}: datagram from {} rejected: {} at offset {} ({} bytes)",
                  header.device.empty() ? std::string("unknown") : std::string(header.device.str()),
                  peer, codecs::to_string(s.code), s.offset, datagram.size());
          return;
        }
        const std::string imei(header.device.str());
        if (config->allowlist && !config->allowlist->admits(imei)) {
          counters.handshakes_rejected.fetch_add(1);
          counters.refusals.count(refusal::allowlist);
          refusal_log(refusal::allowlist)
              .log(spdlog::level::warn, "udp device {}: not in the allowlist; ignored ({})", imei,
                   peer);
          return;
        }
        // The AVL data alone: a resend may carry a new packet id around the same data.
        const std::size_t data_begin = codecs::udp_imei_offset + imei.size();
        udp_packet p{domain::render_packet(
                         imei, packet, std::span<const std::uint8_t>(datagram).subspan(data_begin)),
                     reply, header, static_cast<std::uint8_t>(packet.records.size())};
        if (const auto seen = state->last_seen.find(imei); seen != state->last_seen.end()) {
          seen->second = clock::now();
          persist(std::move(p));
          return;
        }
        // Its first datagram is still being checked: this one goes unanswered, and
        // the device sends it again.
        if (state->identifying.contains(imei)) return;
        if (state->last_seen.size() + state->identifying.size() >= udp.max_devices) {
          counters.refusals.count(refusal::udp_devices);
          refusal_log(refusal::udp_devices)
              .log(spdlog::level::warn,
                   "udp device {}: ignored: {} UDP devices are present already (--udp-max-devices)",
                   imei, state->last_seen.size());
          return;
        }
        state->identifying.insert(imei);
        (*identify)(peer, true, std::move(p));
      },
      [self, state, record_event, idle_timeout, sweep_every](udp_sweep_atom) {
        const auto now = clock::now();
        for (auto it = state->last_seen.begin(); it != state->last_seen.end();) {
          if (now - it->second < idle_timeout) {
            ++it;
            continue;
          }
          presence_log().log(spdlog::level::info, "udp device {}: no datagram for {} ms; gone",
                             it->first, idle_timeout.count());
          record_event(it->first, "disconnected", 0, {{"reason", "udp idle"}});
          it = state->last_seen.erase(it);
        }
        state->sweep_scheduled = !state->last_seen.empty();
        if (state->sweep_scheduled) self->delayed_send(self, sweep_every, udp_sweep_atom::value);
      },
      [self, config, state, record_event](closed_atom, const std::string& reason) {
        for (const auto& [imei, at] : state->last_seen)
          record_event(imei, "disconnected", 0, {{"reason", reason}});
        state->last_seen.clear();
        // Devices whose first datagram is still being checked may be journaled as
        // identified by now: they leave too, if the store knows them.
        for (const auto& imei : state->identifying) {
          journal_event e{imei, "disconnected", 0, {{"reason", reason}}};
          e.known_only = true;
          self->send(writer_for(*config, imei), note_atom::value, std::move(e));
        }
      },
  };
}

}  // namespace tgw::actors::gateway
