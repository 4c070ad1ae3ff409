#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codecs/avl.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/errc.hpp"

/// Invariant checks shared by the libFuzzer targets in this folder.
namespace tgw::fuzz {

/// Stops the process when an invariant does not hold. __builtin_trap rather than
/// assert: it survives NDEBUG (RelWithDebInfo) and libFuzzer reports it as a crash
/// with the input that caused it.
inline void require(bool condition) noexcept {
  if (!condition) __builtin_trap();
}

/// True when two statuses carry the same code and offset.
[[nodiscard]] inline bool same_status(codecs::decode_status a, codecs::decode_status b) noexcept {
  return a.code == b.code && a.offset == b.offset;
}

/// CRC-16/IBM one bit at a time, straight from the definition (reflected 0xA001,
/// initial 0): the oracle for codecs::crc16_ibm, whose table and carry-less multiply
/// paths are much harder to read.
[[nodiscard]] inline std::uint16_t reference_crc16(std::span<const std::uint8_t> data) noexcept {
  std::uint16_t crc = 0;
  for (const std::uint8_t b : data) {
    crc = static_cast<std::uint16_t>(crc ^ b);
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1U) != 0 ? static_cast<std::uint16_t>((crc >> 1) ^ 0xA001U)
                            : static_cast<std::uint16_t>(crc >> 1);
  }
  return crc;
}

/// True when `inner` lies entirely inside `outer` (an empty span anywhere inside counts).
[[nodiscard]] inline bool inside(std::span<const std::uint8_t> inner,
                                 std::span<const std::uint8_t> outer) noexcept {
  // Compare addresses as integers: relational operators on pointers into different
  // objects are unspecified, and the check exists for exactly that case.
  const auto begin = reinterpret_cast<std::uintptr_t>(outer.data());
  const auto first = reinterpret_cast<std::uintptr_t>(inner.data());
  return first >= begin && first - begin <= outer.size() &&
         inner.size() <= outer.size() - (first - begin);
}

/// Checks a decoded packet against the input it borrows: records own consecutive
/// runs of `io`, every element's bytes lie inside `input` at or after `data_begin`,
/// and each fixed-width value is the big-endian number at its offset.
inline void check_packet(const codecs::avl_packet& p, std::span<const std::uint8_t> input,
                         std::size_t data_begin) noexcept {
  require(p.bytes.data() == input.data() && p.bytes.size() == input.size());
  require(!p.records.empty() && p.records.size() <= 255);
  std::size_t next_io = 0;
  for (const codecs::avl_record& r : p.records) {
    require(r.io_begin == next_io);
    require(r.io_count <= p.io.size() - r.io_begin);
    next_io += r.io_count;
  }
  require(next_io == p.io.size());
  for (const codecs::io_element& e : p.io) {
    require(e.offset >= data_begin && e.offset <= input.size() &&
            e.size <= input.size() - e.offset);
    require(inside(p.value_bytes(e), input));
    if (e.variable) {
      require(e.value == 0);
    } else {
      require(e.size == 1 || e.size == 2 || e.size == 4 || e.size == 8);
      require(e.value == codecs::load_be(input.data() + e.offset, e.size));
    }
  }
}

/// True when every record's IO total fits the codec's N field. Decoding reads the
/// four width groups' counts separately and never trusts N, so a Codec 8 record can
/// legitimately hold more than 255 elements; encode_avl_data must refuse that.
[[nodiscard]] inline bool io_totals_fit(const codecs::avl_packet& p) noexcept {
  const std::size_t limit = p.codec == 0x8E ? 0xFFFF : 0xFF;
  return std::ranges::all_of(p.records,
                             [limit](const codecs::avl_record& r) { return r.io_count <= limit; });
}

/// Re-encodes a decoded packet and checks that the result decodes to equal records,
/// both as bare AVL data and as a TCP frame. Records are compared in owning form
/// rather than as bytes: N is rewritten from the actual count, so bytes may differ.
inline void check_avl_roundtrip(const codecs::avl_packet& p) {
  const std::vector<codecs::avl_record_data> records = codecs::to_record_data(p);
  require(records.size() == p.records.size());
  const auto codec = static_cast<codecs::codec_id>(p.codec);

  std::vector<std::uint8_t> data;
  const codecs::errc e = codecs::encode_avl_data(codec, records, data);
  if (!io_totals_fit(p)) {
    require(e == codecs::errc::value_out_of_range && data.empty());
    return;
  }
  require(e == codecs::errc::ok);

  codecs::avl_packet again;
  const codecs::decode_status s = codecs::decode_avl_data(data, 0, again);
  require(s.ok() && s.offset == data.size());
  require(again.codec == p.codec);
  require(codecs::to_record_data(again) == records);
  for (const codecs::avl_record& r : again.records) require(r.declared_io_total == r.io_count);

  // Encoding the normalised records again must be a fixed point.
  std::vector<std::uint8_t> twice;
  require(codecs::encode_avl_data(codec, codecs::to_record_data(again), twice) == codecs::errc::ok);
  require(twice == data);

  std::vector<std::uint8_t> frame;
  require(codecs::encode_avl_frame(codec, records, frame) == codecs::errc::ok);
  require(frame.size() == data.size() + codecs::tcp_frame_header + codecs::tcp_frame_trailer);
  require(std::ranges::equal(
      data, std::span<const std::uint8_t>(frame).subspan(codecs::tcp_frame_header, data.size())));
  codecs::avl_packet framed;
  const codecs::decode_status fs = codecs::decode_avl_frame(frame, framed);
  require(fs.ok() && fs.offset == frame.size() && framed.crc_ok());
  require(codecs::to_record_data(framed) == records);
}

}  // namespace tgw::fuzz
