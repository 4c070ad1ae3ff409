#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codecs/codec_id.hpp"
#include "infra/json/frame_json.hpp"

namespace tgw::infra {

/// How to read a blob of bytes.
enum class transport_hint : std::uint8_t { automatic, tcp, udp };

struct inspect_options {
  codecs::crc_policy crc = codecs::crc_policy::strict;
  transport_hint transport = transport_hint::automatic;
  std::size_t max_frame_size = std::size_t{64} * 1024;
};

/// The JSON objects describing one blob, and whether any part of it was invalid.
struct inspection {
  std::vector<json> frames;
  bool failed = false;
};

/// Describes every frame in `blob`. A blob that starts with a TCP preamble or an IMEI
/// handshake is read as a TCP stream (any number of frames back to back); anything
/// else as one UDP datagram. Each frame becomes an object with its kind (imei,
/// keepalive, avl, command, error), its fields and the reply a server would send. An
/// invalid frame becomes {"kind":"error","error":code,"offset":n} with the offset
/// counted from the start of the blob; a TCP stream stops at its first error.
[[nodiscard]] inspection inspect_blob(std::span<const std::uint8_t> blob,
                                      const inspect_options& options);

}  // namespace tgw::infra
