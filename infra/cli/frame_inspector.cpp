#include "infra/cli/frame_inspector.hpp"

#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/command.hpp"
#include "codecs/imei.hpp"
#include "codecs/tcp_framer.hpp"
#include "codecs/udp.hpp"
#include "infra/text/hex.hpp"

namespace tgw::infra {
namespace {

using namespace codecs;

json error_json(std::string_view transport, const decode_status& status, std::size_t base) {
  return {{"kind", "error"},
          {"transport", transport},
          {"error", to_string(status.code)},
          {"offset", base + status.offset}};
}

bool starts_like_imei_packet(std::span<const std::uint8_t> blob) {
  if (blob.size() < imei_packet_header) return false;
  const std::size_t length = load_be16(blob.data());
  if (length < imei_min_digits || length > imei_max_digits) return false;
  const std::size_t present = std::min(blob.size() - imei_packet_header, length);
  for (std::size_t i = 0; i < present; ++i)
    if (blob[imei_packet_header + i] < '0' || blob[imei_packet_header + i] > '9') return false;
  return true;
}

bool starts_like_tcp_frame(std::span<const std::uint8_t> blob) {
  return blob.size() >= 4 && blob[0] == 0 && blob[1] == 0 && blob[2] == 0 && blob[3] == 0;
}

json imei_json(std::span<const std::uint8_t> bytes, inspection& result, std::size_t base) {
  imei device;
  const decode_status s = parse_imei_packet(bytes, device);
  if (!s.ok()) {
    result.failed = true;
    return error_json("tcp", s, base);
  }
  return {{"kind", "imei"}, {"transport", "tcp"}, {"imei", device.str()}, {"reply", "01"}};
}

json tcp_avl_json(std::span<const std::uint8_t> bytes, const inspect_options& options,
                  avl_packet& packet, inspection& result, std::size_t base) {
  const decode_status s = decode_avl_frame(bytes, packet, options.crc);
  if (!s.ok()) {
    result.failed = true;
    json e = error_json("tcp", s, base);
    e["codec"] = codec_name(bytes.size() > tcp_frame_header ? bytes[tcp_frame_header] : 0);
    if (s.code == errc::bad_crc) e["crc"] = crc_json(packet.crc_field, packet.crc_computed);
    return e;
  }
  json j = {{"kind", "avl"},
            {"transport", "tcp"},
            {"codec", codec_name(packet.codec)},
            {"size", bytes.size()},
            {"crc", crc_json(packet.crc_field, packet.crc_computed)}};
  json records = json::array();
  for (const avl_record& r : packet.records) records.push_back(record_json(packet, r));
  j["record_count"] = packet.records.size();
  j["records"] = std::move(records);
  j["ack"] = to_hex(avl_ack(static_cast<std::uint32_t>(packet.records.size())));
  return j;
}

json tcp_command_json(std::span<const std::uint8_t> bytes, const inspect_options& options,
                      inspection& result, std::size_t base) {
  command_message message;
  const decode_status s = decode_command_frame(bytes, message, options.crc);
  if (!s.ok()) {
    result.failed = true;
    json e = error_json("tcp", s, base);
    e["codec"] = codec_name(bytes.size() > tcp_frame_header ? bytes[tcp_frame_header] : 0);
    if (s.code == errc::bad_crc) e["crc"] = crc_json(message.crc_field, message.crc_computed);
    return e;
  }
  json j = {{"kind", "command"}, {"transport", "tcp"}, {"size", bytes.size()}};
  j.update(command_json(message));
  // Codec 12/13 messages must never be answered with the 4-byte AVL ACK.
  j["ack"] = nullptr;
  return j;
}

void inspect_tcp(std::span<const std::uint8_t> blob, const inspect_options& options,
                 inspection& result) {
  tcp_framer framer(options.max_frame_size, starts_like_imei_packet(blob));
  framer.append(blob);
  avl_packet packet;
  while (true) {
    const std::size_t base = framer.stream_offset();
    const frame_result next = framer.next();
    if (next.status.code == errc::need_more) {
      if (framer.buffered() > 0) {
        result.failed = true;
        result.frames.push_back(error_json("tcp", {errc::truncated, blob.size()}, 0));
      }
      return;
    }
    if (!next.status.ok()) {
      result.failed = true;
      result.frames.push_back(error_json("tcp", next.status, 0));
      return;
    }
    const auto bytes = next.value.bytes;
    switch (next.value.kind) {
      case frame_kind::imei:
        result.frames.push_back(imei_json(bytes, result, base));
        break;
      case frame_kind::keepalive:
        result.frames.push_back({{"kind", "keepalive"}, {"transport", "tcp"}, {"reply", nullptr}});
        break;
      case frame_kind::avl:
        result.frames.push_back(tcp_avl_json(bytes, options, packet, result, base));
        break;
      case frame_kind::command:
        result.frames.push_back(tcp_command_json(bytes, options, result, base));
        break;
    }
  }
}

void inspect_udp(std::span<const std::uint8_t> blob, inspection& result) {
  udp_header header;
  avl_packet packet;
  const decode_status s = decode_udp_datagram(blob, header, packet);
  if (!s.ok()) {
    result.failed = true;
    json e = error_json("udp", s, 0);
    if (s.code == errc::length_mismatch) {
      e["declared_length"] = load_be16(blob.data());
      e["actual_length"] = blob.size() - 2;
    }
    result.frames.push_back(std::move(e));
    return;
  }
  json j = {{"kind", "avl"},
            {"transport", "udp"},
            {"codec", codec_name(packet.codec)},
            {"size", blob.size()},
            {"packet_id", header.packet_id},
            {"packet_type", header.packet_type},
            {"avl_packet_id", header.avl_packet_id},
            {"imei", header.device.str()}};
  json records = json::array();
  for (const avl_record& r : packet.records) records.push_back(record_json(packet, r));
  j["record_count"] = packet.records.size();
  j["records"] = std::move(records);
  j["response"] = to_hex(udp_response(header.packet_id, header.avl_packet_id,
                                      static_cast<std::uint8_t>(packet.records.size())));
  result.frames.push_back(std::move(j));
}

}  // namespace

inspection inspect_blob(std::span<const std::uint8_t> blob, const inspect_options& options) {
  inspection result;
  const bool tcp = options.transport == transport_hint::tcp ||
                   (options.transport == transport_hint::automatic &&
                    (starts_like_tcp_frame(blob) || starts_like_imei_packet(blob) ||
                     (!blob.empty() && blob[0] == 0xFF)));
  if (tcp)
    inspect_tcp(blob, options, result);
  else
    inspect_udp(blob, result);
  return result;
}

}  // namespace tgw::infra
