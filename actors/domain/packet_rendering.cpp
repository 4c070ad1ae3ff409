#include "actors/domain/packet_rendering.hpp"

#include <charconv>

#include "codecs/codec_id.hpp"
#include "infra/text/hex.hpp"

namespace tgw::domain {
namespace {

template <class Unsigned>
void append_number(std::string& out, Unsigned n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

/// The record's IO elements in the format 4 form, in wire order (a repeated id stays
/// twice): [[id,"decimal",size],...] for fixed-width values, every one a decimal string
/// so that no JSON reader rounds one, with its size on the wire (1, 2, 4 or 8), which
/// says how a signed element sign-extends whatever size the reader's IO dictionary
/// expects; and [id,{"hex":"..."}] for variable-length (NX) values, which a reader so
/// tells from numbers by type. Written into one buffer sized up front: this runs once
/// per record on the data path.
std::string io_json(const codecs::avl_packet& packet, const codecs::avl_record& r) {
  const auto elements = packet.io_of(r);
  std::size_t estimate = 2;
  for (const codecs::io_element& e : elements)
    estimate += 10 + (e.variable ? 10 + 2 * std::size_t{e.size} : 24);
  std::string io;
  io.reserve(estimate);
  io += '[';
  for (const codecs::io_element& e : elements) {
    if (io.size() > 1) io += ',';
    io += '[';
    append_number(io, e.id);
    if (e.variable) {
      io += R"(,{"hex":")";
      io += infra::to_hex(packet.value_bytes(e));
      io += "\"}]";
    } else {
      io += ",\"";
      append_number(io, e.value);
      io += "\",";
      io += static_cast<char>('0' + e.size);
      io += ']';
    }
  }
  io += ']';
  return io;
}

}  // namespace

std::string fingerprint(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3ULL;
  }
  std::uint8_t be[8];
  for (int i = 0; i < 8; ++i) be[i] = static_cast<std::uint8_t>(h >> (56 - 8 * i));
  return infra::to_hex(be);
}

ports::packet_job render_packet(const std::string& imei, const codecs::avl_packet& packet,
                                std::span<const std::uint8_t> frame) {
  ports::packet_job job;
  job.imei = imei;
  job.fingerprint = fingerprint(frame);
  job.codec = std::string(codecs::codec_name(packet.codec));
  const bool has_generation = packet.codec == static_cast<std::uint8_t>(codecs::codec_id::codec16);
  job.records.reserve(packet.records.size());
  for (const codecs::avl_record& r : packet.records) {
    std::string io = io_json(packet, r);
    job.records.push_back(
        {std::to_string(r.timestamp_ms), std::to_string(r.priority), std::to_string(r.longitude),
         std::to_string(r.latitude), std::to_string(r.altitude), std::to_string(r.angle),
         std::to_string(r.satellites), std::to_string(r.speed), std::to_string(r.event_io_id),
         std::move(io), has_generation ? std::to_string(r.generation_type) : std::string()});
  }
  return job;
}

}  // namespace tgw::domain
