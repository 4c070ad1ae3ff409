#pragma once

#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/crc16.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/printers.hpp"

namespace tgw::test {

/// The official Teltonika examples (tests/data/teltonika_official.json), parsed once.
/// Throws if the file is missing or malformed, so a test using it fails loudly.
inline const nlohmann::json& official_vectors() {
  static const nlohmann::json vectors = [] {
    const std::string path = std::string(TGW_TEST_DATA_DIR) + "/teltonika_official.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    nlohmann::json parsed = nlohmann::json::parse(in);
    if (!parsed.is_array()) throw std::runtime_error(path + " is not an array");
    return parsed;
  }();
  return vectors;
}

/// The vector called `name`; throws if there is none.
inline const nlohmann::json& official_vector(const std::string& name) {
  for (const nlohmann::json& v : official_vectors())
    if (v.at("name") == name) return v;
  throw std::out_of_range("no official vector " + name);
}

/// The bytes of the vector called `name`.
inline std::vector<std::uint8_t> official_bytes(const std::string& name) {
  return from_hex(official_vector(name).at("hex").get<std::string>());
}

/// Rewrites the CRC field of a TCP frame (AVL or command) after a test tampered with
/// its data, so that the decoder gets past the CRC to the fault under test.
inline void recompute_crc(std::vector<std::uint8_t>& frame) {
  const std::size_t length = codecs::load_be32(frame.data() + 4);
  const std::uint16_t crc = codecs::crc16_ibm(
      std::span<const std::uint8_t>(frame).subspan(codecs::tcp_frame_header, length));
  codecs::store_be32(frame.data() + codecs::tcp_frame_header + length, crc);
}

/// Sets the DataFieldLength of a TCP frame to match its size.
inline void fix_tcp_length(std::vector<std::uint8_t>& frame) {
  codecs::store_be32(frame.data() + 4, static_cast<std::uint32_t>(frame.size() - 12));
}

/// A value of `width` bytes, often at the edges of its range.
inline std::uint64_t random_value(std::mt19937_64& rng, std::uint8_t width) {
  const std::uint64_t max = width >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
  switch (rng() % 4) {
    case 0:
      return 0;
    case 1:
      return max;
    default:
      return rng() & max;
  }
}

/// A random record that `codec` can carry, its IO values grouped by width in the
/// order the encoder writes them (1, 2, 4, 8, then NX), so that a decode gives it back.
inline codecs::avl_record_data random_record(std::mt19937_64& rng, codecs::codec_id codec) {
  using codecs::codec_id;
  const std::uint64_t id_mask = codec == codec_id::codec8 ? 0xFF : 0xFFFF;
  codecs::avl_record_data r;
  r.timestamp_ms = rng();
  r.priority = static_cast<std::uint8_t>(rng());
  r.longitude = static_cast<std::int32_t>(static_cast<std::uint32_t>(rng()));
  r.latitude = static_cast<std::int32_t>(static_cast<std::uint32_t>(rng()));
  r.altitude = static_cast<std::int16_t>(static_cast<std::uint16_t>(rng()));
  r.angle = static_cast<std::uint16_t>(rng());
  r.satellites = static_cast<std::uint8_t>(rng());
  r.speed = static_cast<std::uint16_t>(rng());
  r.event_io_id = static_cast<std::uint16_t>(rng() & id_mask);
  if (codec == codec_id::codec16) r.generation_type = static_cast<std::uint8_t>(rng() % 8);
  for (const std::uint8_t width :
       {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{4}, std::uint8_t{8}}) {
    const std::size_t n = rng() % 6;
    for (std::size_t i = 0; i < n; ++i)
      r.io.push_back(
          {static_cast<std::uint16_t>(rng() & id_mask), width, random_value(rng, width), {}});
  }
  if (codec == codec_id::codec8e) {
    const std::size_t n = rng() % 4;
    for (std::size_t i = 0; i < n; ++i) {
      codecs::io_value v{static_cast<std::uint16_t>(rng()), 0, 0, {}};
      v.bytes.resize(rng() % 3 == 0 ? 0 : rng() % 64);
      for (std::uint8_t& b : v.bytes) b = static_cast<std::uint8_t>(rng());
      r.io.push_back(std::move(v));
    }
  }
  return r;
}

/// One to `max_records` random records for `codec`.
inline std::vector<codecs::avl_record_data> random_records(std::mt19937_64& rng,
                                                           codecs::codec_id codec,
                                                           std::size_t max_records = 6) {
  std::vector<codecs::avl_record_data> records(1 + rng() % max_records);
  for (auto& r : records) r = random_record(rng, codec);
  return records;
}

/// The codecs that carry AVL records, for loops and parameterised tests.
inline constexpr codecs::codec_id avl_codecs[] = {
    codecs::codec_id::codec8, codecs::codec_id::codec8e, codecs::codec_id::codec16};

}  // namespace tgw::test
