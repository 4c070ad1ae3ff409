#pragma once

#include <cstdint>
#include <string_view>

namespace tgw::infra::redis {

/// Redis Cluster's number of hash slots.
inline constexpr std::uint16_t cluster_slots = 16384;

/// The hash slot of `key` as Redis Cluster computes it: CRC16 (XMODEM) of the key,
/// or of its hash tag, modulo 16384. The hash tag is what lies between the first '{'
/// and the first '}' after it, when that is not empty: "{356307042441013}:events" and
/// "device:{356307042441013}" share a slot.
[[nodiscard]] std::uint16_t key_slot(std::string_view key) noexcept;

/// CRC16-XMODEM (polynomial 0x1021, initial value 0), the checksum behind key_slot.
[[nodiscard]] std::uint16_t crc16_xmodem(std::string_view bytes) noexcept;

}  // namespace tgw::infra::redis
