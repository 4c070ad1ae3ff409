#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "codecs/avl.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/errc.hpp"

namespace tgw::codecs {

/// Bytes around the AVL data of a TCP frame: preamble and length before, CRC after.
inline constexpr std::size_t tcp_frame_header = 8;
inline constexpr std::size_t tcp_frame_trailer = 4;

/// Decodes a whole TCP AVL frame (preamble, length, codec 08/8E/10 data, CRC) into
/// `out`, which keeps borrowing `frame`. Checks, each with its own code and the offset
/// in `frame` where the fault is: preamble, declared length against the frame size,
/// CRC (unless `crc` is ignore: then out.crc_ok() tells), codec, NumberOfData1 ==
/// NumberOfData2, IO counts against the bytes present, and that the records end
/// exactly where the declared length says.
[[nodiscard]] decode_status decode_avl_frame(std::span<const std::uint8_t> frame, avl_packet& out,
                                             crc_policy crc = crc_policy::strict) noexcept;

/// Decodes AVL data alone (codec id through NumberOfData2), as UDP datagrams carry
/// it. Offsets in `out` and in the status count from the start of `input`; the data
/// is input[begin, input.size()).
[[nodiscard]] decode_status decode_avl_data(std::span<const std::uint8_t> input, std::size_t begin,
                                            avl_packet& out) noexcept;

/// The 4-byte ACK a server sends for a TCP AVL frame: the number of records stored.
[[nodiscard]] constexpr std::array<std::uint8_t, 4> avl_ack(std::uint32_t records) noexcept {
  return {static_cast<std::uint8_t>(records >> 24), static_cast<std::uint8_t>(records >> 16),
          static_cast<std::uint8_t>(records >> 8), static_cast<std::uint8_t>(records)};
}

}  // namespace tgw::codecs
