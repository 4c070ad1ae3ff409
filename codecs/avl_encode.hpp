#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codecs/avl.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/errc.hpp"
#include "codecs/imei.hpp"

namespace tgw::codecs {

/// An IO value that owns its bytes: what encoders take and what tests compare.
struct io_value {
  std::uint16_t id = 0;
  std::uint8_t width = 1;  ///< 1, 2, 4 or 8; 0 for a Codec 8E NX element.
  std::uint64_t value = 0;
  std::vector<std::uint8_t> bytes;  ///< The NX value when width == 0.

  friend bool operator==(const io_value&, const io_value&) = default;
};

/// An AVL record that owns its IO values. Encoders write the values grouped by width
/// (1, 2, 4, 8, then NX) in the order given within each group.
struct avl_record_data {
  std::uint64_t timestamp_ms = 0;
  std::uint8_t priority = 0;
  std::int32_t longitude = 0;
  std::int32_t latitude = 0;
  std::int16_t altitude = 0;
  std::uint16_t angle = 0;
  std::uint8_t satellites = 0;
  std::uint16_t speed = 0;
  std::uint16_t event_io_id = 0;
  std::uint8_t generation_type = 0;  ///< Codec 16 only.
  std::vector<io_value> io;

  friend bool operator==(const avl_record_data&, const avl_record_data&) = default;
};

/// Appends AVL data (codec id through NumberOfData2) to `out`. errc::value_out_of_range
/// when a value does not fit the codec: an id or count above 255 in Codec 8, an NX
/// element outside Codec 8E, zero or more than 255 records. `out` is unchanged then.
[[nodiscard]] errc encode_avl_data(codec_id codec, std::span<const avl_record_data> records,
                                   std::vector<std::uint8_t>& out);

/// Appends a whole TCP AVL frame: preamble, length, AVL data and CRC.
[[nodiscard]] errc encode_avl_frame(codec_id codec, std::span<const avl_record_data> records,
                                    std::vector<std::uint8_t>& out);

/// Appends a UDP AVL datagram carrying `records` from `device`.
[[nodiscard]] errc encode_udp_datagram(std::uint16_t packet_id, std::uint8_t avl_packet_id,
                                       const imei& device, codec_id codec,
                                       std::span<const avl_record_data> records,
                                       std::vector<std::uint8_t>& out);

/// Appends the TCP handshake packet for `device`.
void encode_imei_packet(const imei& device, std::vector<std::uint8_t>& out);

/// Copies a decoded packet's records into owning form.
[[nodiscard]] std::vector<avl_record_data> to_record_data(const avl_packet& packet);

}  // namespace tgw::codecs
