#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tgw::codecs {

/// One IO element of a record. Fixed-width values (1, 2, 4 or 8 bytes) are decoded
/// into `value`; Codec 8 Extended NX values are left in the input and reached through
/// avl_packet::value_bytes().
struct io_element {
  std::uint64_t value = 0;   ///< Unsigned big-endian value; 0 for a variable element.
  std::uint32_t offset = 0;  ///< Where the value's bytes start in avl_packet::bytes.
  std::uint16_t id = 0;
  std::uint16_t size = 0;  ///< Bytes on the wire: 1, 2, 4, 8, or the NX length.
  bool variable = false;   ///< True for an element of the 8E NX section.
};

/// One AVL record. Coordinates are signed degrees times 10^7; longitude comes first on
/// the wire. The record's IO elements are avl_packet::io_of(record).
struct avl_record {
  std::uint64_t timestamp_ms = 0;
  std::int32_t longitude = 0;
  std::int32_t latitude = 0;
  std::int16_t altitude = 0;
  std::uint16_t angle = 0;
  std::uint16_t speed = 0;
  std::uint16_t event_io_id = 0;
  std::uint16_t declared_io_total = 0;  ///< The N field as sent, for diagnostics.
  std::uint8_t priority = 0;
  std::uint8_t satellites = 0;
  std::uint8_t generation_type = 0;  ///< Codec 16 only.
  std::uint32_t io_begin = 0;
  std::uint32_t io_count = 0;
};

/// A decoded AVL packet. It borrows the input it was decoded from (`bytes`) and is
/// meant to be reused: clear() keeps the vectors' capacity, so decoding allocates
/// nothing once it has seen its largest packet.
struct avl_packet {
  std::uint8_t codec = 0;
  std::vector<avl_record> records;
  std::vector<io_element> io;
  std::span<const std::uint8_t> bytes;  ///< The decoded input; offsets refer to it.
  bool has_crc = false;                 ///< TCP frames carry a CRC, UDP datagrams do not.
  std::uint32_t crc_field = 0;          ///< As sent: the upper 16 bits must be zero.
  std::uint16_t crc_computed = 0;

  [[nodiscard]] bool crc_ok() const noexcept { return !has_crc || crc_field == crc_computed; }

  [[nodiscard]] std::span<const io_element> io_of(const avl_record& r) const noexcept {
    return std::span<const io_element>(io).subspan(r.io_begin, r.io_count);
  }

  [[nodiscard]] std::span<const std::uint8_t> value_bytes(const io_element& e) const noexcept {
    return bytes.subspan(e.offset, e.size);
  }

  void clear() noexcept {
    codec = 0;
    records.clear();
    io.clear();
    bytes = {};
    has_crc = false;
    crc_field = crc_computed = 0;
  }
};

}  // namespace tgw::codecs
