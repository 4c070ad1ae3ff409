#pragma once

#include <cstdint>
#include <string_view>

namespace tgw::codecs {

/// The codec id byte that follows the length of every TCP frame.
enum class codec_id : std::uint8_t {
  codec8 = 0x08,
  codec8e = 0x8E,
  codec16 = 0x10,
  codec12 = 0x0C,
  codec13 = 0x0D,
  codec14 = 0x0E,
  codec15 = 0x0F,
};

/// True for the telemetry codecs (8, 8 Extended, 16).
[[nodiscard]] constexpr bool is_avl_codec(std::uint8_t id) noexcept {
  return id == 0x08 || id == 0x8E || id == 0x10;
}

/// True for the command and message codecs (12, 13, 14, 15).
[[nodiscard]] constexpr bool is_command_codec(std::uint8_t id) noexcept {
  return id >= 0x0C && id <= 0x0F;
}

/// "8", "8E", "16", "12", ... for logs and JSON; "unknown" otherwise.
[[nodiscard]] constexpr std::string_view codec_name(std::uint8_t id) noexcept {
  switch (id) {
    case 0x08:
      return "8";
    case 0x8E:
      return "8E";
    case 0x10:
      return "16";
    case 0x0C:
      return "12";
    case 0x0D:
      return "13";
    case 0x0E:
      return "14";
    case 0x0F:
      return "15";
    default:
      return "unknown";
  }
}

/// Whether a decoder refuses a frame whose CRC is wrong or decodes it and flags it.
enum class crc_policy : std::uint8_t { strict, ignore };

}  // namespace tgw::codecs
