#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "codecs/avl.hpp"
#include "codecs/errc.hpp"
#include "codecs/imei.hpp"

namespace tgw::codecs {

/// The header of a UDP AVL datagram; the AVL data that follows has no CRC.
struct udp_header {
  std::uint16_t length = 0;  ///< Bytes after the length field.
  std::uint16_t packet_id = 0;
  std::uint8_t packet_type = 0;  ///< "Not usable byte", 01 on current devices.
  std::uint8_t avl_packet_id = 0;
  imei device;
};

/// Bytes from the start of a datagram to the IMEI digits.
inline constexpr std::size_t udp_imei_offset = 8;

/// Parses `length | packet id | type | AVL packet id | IMEI length | IMEI | AVL data`.
/// The length field must match the datagram (length_mismatch at offset 0 otherwise);
/// the AVL data is decoded into `out` by decode_avl_data.
[[nodiscard]] decode_status decode_udp_datagram(std::span<const std::uint8_t> datagram,
                                                udp_header& header, avl_packet& out) noexcept;

/// The 7-byte response to a UDP AVL datagram: 0005, the packet id, 01, the AVL
/// packet id and the number of records accepted.
[[nodiscard]] constexpr std::array<std::uint8_t, 7> udp_response(std::uint16_t packet_id,
                                                                 std::uint8_t avl_packet_id,
                                                                 std::uint8_t accepted) noexcept {
  return {0x00,
          0x05,
          static_cast<std::uint8_t>(packet_id >> 8),
          static_cast<std::uint8_t>(packet_id),
          0x01,
          avl_packet_id,
          accepted};
}

}  // namespace tgw::codecs
