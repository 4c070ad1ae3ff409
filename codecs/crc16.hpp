#pragma once

#include <cstdint>
#include <span>

namespace tgw::codecs {

/// CRC-16/IBM as Teltonika uses it (reflected polynomial 0xA001, initial value 0, no
/// final xor; also known as CRC-16/ARC). CRC("123456789") == 0xBB3D.
[[nodiscard]] std::uint16_t crc16_ibm(std::span<const std::uint8_t> data) noexcept;

}  // namespace tgw::codecs
