#include "infra/telemetry/packet_rendering.hpp"

#include "infra/text/hex.hpp"

namespace tgw::infra::telemetry {

std::string fingerprint(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3ULL;
  }
  std::uint8_t be[8];
  for (int i = 0; i < 8; ++i) be[i] = static_cast<std::uint8_t>(h >> (56 - 8 * i));
  return to_hex(be);
}

packet_job render_packet(const std::string& imei, const codecs::avl_packet& packet,
                         std::span<const std::uint8_t> frame) {
  packet_job job;
  job.imei = imei;
  job.fingerprint = fingerprint(frame);
  job.records.reserve(packet.records.size());
  for (const codecs::avl_record& r : packet.records) {
    std::string io = "{";
    for (const codecs::io_element& e : packet.io_of(r)) {
      if (io.size() > 1) io += ',';
      io += '"';
      io += std::to_string(e.id);
      io += "\":";
      if (e.variable) {
        io += '"';
        io += to_hex(packet.value_bytes(e));
        io += '"';
      } else {
        io += std::to_string(e.value);
      }
    }
    io += '}';
    job.records.push_back({std::to_string(r.timestamp_ms), std::to_string(r.priority),
                           std::to_string(r.longitude), std::to_string(r.latitude),
                           std::to_string(r.altitude), std::to_string(r.angle),
                           std::to_string(r.satellites), std::to_string(r.speed),
                           std::to_string(r.event_io_id), std::move(io)});
  }
  return job;
}

}  // namespace tgw::infra::telemetry
