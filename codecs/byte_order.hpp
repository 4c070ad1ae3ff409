#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

/// Big-endian loads and stores. Teltonika puts every integer on the wire in network
/// order; fields are copied out with memcpy rather than read through a cast pointer,
/// because frames sit at arbitrary offsets inside socket buffers.
namespace tgw::codecs {

[[nodiscard]] inline std::uint16_t load_be16(const std::uint8_t* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_bswap16(v);
}

[[nodiscard]] inline std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_bswap32(v);
}

[[nodiscard]] inline std::uint64_t load_be64(const std::uint8_t* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_bswap64(v);
}

/// Loads an unsigned big-endian integer of 1, 2, 4 or 8 bytes.
[[nodiscard]] inline std::uint64_t load_be(const std::uint8_t* p, std::size_t width) noexcept {
  switch (width) {
    case 1:
      return *p;
    case 2:
      return load_be16(p);
    case 4:
      return load_be32(p);
    default:
      return load_be64(p);
  }
}

inline void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  v = __builtin_bswap16(v);
  std::memcpy(p, &v, sizeof v);
}

inline void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, sizeof v);
}

inline void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, sizeof v);
}

}  // namespace tgw::codecs
