#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "codecs/codec_id.hpp"
#include "codecs/errc.hpp"
#include "codecs/imei.hpp"

namespace tgw::codecs {

/// Message types of Codec 12/13/14/15.
namespace message_type {
inline constexpr std::uint8_t command = 0x05;   ///< Server to device.
inline constexpr std::uint8_t response = 0x06;  ///< Device to server (Codec 14: ACK).
inline constexpr std::uint8_t camera = 0x0D;    ///< Codec 12 camera messages.
inline constexpr std::uint8_t message = 0x0B;   ///< Codec 15.
inline constexpr std::uint8_t nack = 0x11;      ///< Codec 14: the IMEI did not match.
}  // namespace message_type

/// A decoded Codec 12/13/14/15 message. `payload` borrows the frame and excludes the
/// Codec 13/15 timestamp and the Codec 14/15 IMEI, which have their own fields.
struct command_message {
  std::uint8_t codec = 0;
  std::uint8_t type = 0;
  std::uint8_t quantity = 0;
  bool has_timestamp = false;  ///< Codec 13 and 15.
  std::uint32_t timestamp_s = 0;
  bool has_imei = false;  ///< Codec 14 and 15.
  imei device;
  std::span<const std::uint8_t> payload;
  std::uint32_t crc_field = 0;
  std::uint16_t crc_computed = 0;

  [[nodiscard]] bool crc_ok() const noexcept { return crc_field == crc_computed; }
  /// True when every payload byte is printable ASCII or common whitespace.
  [[nodiscard]] bool payload_is_text() const noexcept;
  [[nodiscard]] std::string_view payload_text() const noexcept {
    return {reinterpret_cast<const char*>(payload.data()), payload.size()};
  }
};

/// Decodes a whole TCP frame of Codec 12, 13, 14 or 15. Checks: preamble, declared
/// length, CRC (unless ignored), codec, message type, that the inner size fits the
/// data size, Quantity1 == Quantity2, and the Codec 14/15 IMEI digits.
[[nodiscard]] decode_status decode_command_frame(std::span<const std::uint8_t> frame,
                                                 command_message& out,
                                                 crc_policy crc = crc_policy::strict) noexcept;

/// What an encoder needs to build a Codec 12/13/14/15 frame.
struct command_fields {
  codec_id codec = codec_id::codec12;
  std::uint8_t type = message_type::command;
  std::uint32_t timestamp_s = 0;  ///< Written for Codec 13 and 15.
  imei device;                    ///< Written for Codec 14 and 15.
  std::span<const std::uint8_t> payload;
};

/// Appends the frame for `fields` to `out`. errc::value_out_of_range if the codec is
/// not 12..15, or if Codec 14/15 has no IMEI.
[[nodiscard]] errc encode_command_frame(const command_fields& fields,
                                        std::vector<std::uint8_t>& out);

/// The byte offset of the first control character in a command's text, if it holds
/// one: C0 (NUL, CR, LF, ESC, TAB...), DEL, or a UTF-8 encoded C1. A device reads a
/// command's text as one line; a CR or LF inside it would make one that splits its
/// input on line ends run a second command the publisher never showed, and NUL or ESC
/// reach its parser or a terminal raw.
[[nodiscard]] std::optional<std::size_t> find_control_character(std::string_view text) noexcept;

/// The payload of `text` as bytes, for command_fields::payload.
[[nodiscard]] inline std::span<const std::uint8_t> as_bytes(std::string_view text) noexcept {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

}  // namespace tgw::codecs
