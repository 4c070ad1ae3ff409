#include "actors/gateway/udp_ingest.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_messages.hpp"
#include "codecs/udp.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/telemetry/packet_rendering.hpp"

namespace tgw::actors::gateway {
namespace {

using clock = std::chrono::steady_clock;
using infra::telemetry::journal_event;
using infra::telemetry::write_outcome;

const telemetry_writer_actor& writer_for(const session_config& config, const std::string& imei) {
  return config.writers[std::hash<std::string>{}(imei) % config.writers.size()];
}

}  // namespace

udp_ingest_actor::behavior_type udp_ingest(udp_ingest_actor::stateful_pointer<udp_state> self,
                                           const std::shared_ptr<const session_config>& config,
                                           std::chrono::milliseconds idle_timeout) {
  // The actor's own: its handlers run only while it does.
  udp_state* state = &self->state;
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

  return {
      [self, config, state, record_event, sweep_every](
          datagram_atom, const std::vector<std::uint8_t>& datagram,
          const infra::net::udp_reply& reply, const std::string& peer) {
        auto& counters = *config->counters;
        counters.frames_avl.fetch_add(1);
        thread_local codecs::avl_packet packet;
        codecs::udp_header header;
        const codecs::decode_status s = codecs::decode_udp_datagram(datagram, header, packet);
        if (!s.ok()) {
          counters.frames_rejected.fetch_add(1);
          spdlog::warn(
              "udp device {}: datagram rejected: {} at offset {} ({} bytes)",
              header.device.empty() ? std::string("unknown") : std::string(header.device.str()),
              codecs::to_string(s.code), s.offset, datagram.size());
          return;
        }
        const std::string imei(header.device.str());
        if (config->allowlist && !config->allowlist->admits(imei)) {
          counters.handshakes_rejected.fetch_add(1);
          spdlog::warn("udp device {}: not in the allowlist; ignored", imei);
          return;
        }
        // Sent before the packet to the same writer, so the journal has `identified`
        // ahead of the records it introduces.
        const auto [seen, first] = state->last_seen.try_emplace(imei, clock::now());
        if (first) {
          spdlog::info("udp device {}: present, from {}", imei, peer);
          record_event(imei, "identified", 1, {{"peer", peer}, {"transport", "udp"}});
        } else {
          seen->second = clock::now();
        }
        if (!state->sweep_scheduled) {
          state->sweep_scheduled = true;
          self->delayed_send(self, sweep_every, udp_sweep_atom::value);
        }
        // The AVL data alone: a resend may carry a new packet id around the same data.
        const std::size_t data_begin = codecs::udp_imei_offset + imei.size();
        auto job = infra::telemetry::render_packet(
            imei, packet, std::span<const std::uint8_t>(datagram).subspan(data_begin));
        const auto n = static_cast<std::uint8_t>(packet.records.size());
        counters.persist_in_flight.fetch_add(1);
        self->request(writer_for(*config, imei), caf::duration{caf::infinite}, persist_atom::value,
                      std::move(job))
            .then(
                [config, reply, header, n, imei](const write_outcome& o) {
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
                  const auto response =
                      codecs::udp_response(header.packet_id, header.avl_packet_id, n);
                  reply({response.begin(), response.end()});
                  c.acks_sent.fetch_add(1);
                },
                [config, imei](const caf::error& e) {
                  config->counters->persist_in_flight.fetch_sub(1);
                  config->counters->persist_failures.fetch_add(1);
                  spdlog::warn("udp device {}: persist timed out ({})", imei, caf::to_string(e));
                });
      },
      [self, state, record_event, idle_timeout, sweep_every](udp_sweep_atom) {
        const auto now = clock::now();
        for (auto it = state->last_seen.begin(); it != state->last_seen.end();) {
          if (now - it->second < idle_timeout) {
            ++it;
            continue;
          }
          spdlog::info("udp device {}: no datagram for {} ms; gone", it->first,
                       idle_timeout.count());
          record_event(it->first, "disconnected", 0, {{"reason", "udp idle"}});
          it = state->last_seen.erase(it);
        }
        state->sweep_scheduled = !state->last_seen.empty();
        if (state->sweep_scheduled) self->delayed_send(self, sweep_every, udp_sweep_atom::value);
      },
      [state, record_event](closed_atom, const std::string& reason) {
        for (const auto& [imei, at] : state->last_seen)
          record_event(imei, "disconnected", 0, {{"reason", reason}});
        state->last_seen.clear();
      },
  };
}

}  // namespace tgw::actors::gateway
