#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tgw::codecs {

/// Why a decoder refused its input. `need_more` is not a fault: the caller keeps the
/// bytes and calls again once more have arrived. Every other code names one fault.
enum class errc : std::uint8_t {
  ok,
  need_more,
  bad_preamble,           ///< The four leading bytes of a TCP frame are not zero.
  length_too_large,       ///< A declared length is above the configured limit.
  length_too_small,       ///< A declared length cannot hold the fields it must contain.
  length_mismatch,        ///< A declared length disagrees with the bytes the body consumed.
  unknown_codec,          ///< The codec id is none of 08, 8E, 10, 0C, 0D, 0E, 0F.
  wrong_codec,            ///< A known codec where a different family was required.
  bad_crc,                ///< The CRC-16/IBM field does not match the data.
  record_count_mismatch,  ///< NumberOfData1 differs from NumberOfData2.
  zero_records,           ///< An AVL packet declares no records.
  truncated,              ///< A field runs past the end of the data.
  bad_imei_length,        ///< The IMEI length is outside 15..16 digits.
  bad_imei_digit,         ///< The IMEI holds a byte that is not an ASCII digit.
  bad_message_type,       ///< A command message type that the codec does not define.
  bad_udp_header,         ///< A UDP datagram header field is malformed.
  value_out_of_range,     ///< An encoder was given a value its codec cannot carry.
};

/// A stable snake_case name for logs, metrics labels and JSON.
[[nodiscard]] std::string_view to_string(errc code) noexcept;

/// The outcome of a decode: a code and the byte offset, from the start of the input,
/// where the fault was found (for `ok`, the number of bytes consumed).
struct decode_status {
  errc code = errc::ok;
  std::size_t offset = 0;

  [[nodiscard]] bool ok() const noexcept { return code == errc::ok; }
};

}  // namespace tgw::codecs
