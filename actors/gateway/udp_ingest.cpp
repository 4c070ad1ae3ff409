#include "actors/gateway/udp_ingest.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_messages.hpp"
#include "codecs/udp.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/telemetry/packet_rendering.hpp"

namespace tgw::actors::gateway {

caf::behavior udp_ingest(caf::event_based_actor* self,
                         const std::shared_ptr<const session_config>& config) {
  return {
      [self, config](datagram_atom, const std::vector<std::uint8_t>& datagram,
                     const infra::net::udp_reply& reply) {
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
        if (!config->allowlist.empty() && !config->allowlist.contains(imei)) {
          counters.handshakes_rejected.fetch_add(1);
          spdlog::warn("udp device {}: not in the allowlist; ignored", imei);
          return;
        }
        // The AVL data alone: a resend may carry a new packet id around the same data.
        const std::size_t data_begin = codecs::udp_imei_offset + imei.size();
        auto job = infra::telemetry::render_packet(
            imei, packet, std::span<const std::uint8_t>(datagram).subspan(data_begin));
        const auto n = static_cast<std::uint8_t>(packet.records.size());
        counters.persist_in_flight.fetch_add(1);
        self->request(config->writers[std::hash<std::string>{}(imei) % config->writers.size()],
                      caf::duration{caf::infinite}, persist_atom::value, std::move(job))
            .then(
                [config, reply, header, n, imei](const infra::telemetry::write_outcome& o) {
                  auto& c = *config->counters;
                  c.persist_in_flight.fetch_sub(1);
                  if (!o.ok) {
                    c.persist_failures.fetch_add(1);
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
  };
}

}  // namespace tgw::actors::gateway
