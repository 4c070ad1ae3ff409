#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "codecs/errc.hpp"

namespace tgw::codecs {

/// IMEI digits as the device announced them: 15 for an IMEI, 16 for an IMEISV.
inline constexpr std::size_t imei_min_digits = 15;
inline constexpr std::size_t imei_max_digits = 16;

/// A validated IMEI held by value (no allocation), comparable and printable.
class imei {
 public:
  imei() = default;

  /// Validates `digits` (15 or 16 ASCII digits); errc::ok on success.
  [[nodiscard]] static errc parse(std::string_view digits, imei& out) noexcept;

  [[nodiscard]] std::string_view str() const noexcept { return {digits_.data(), size_}; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  friend bool operator==(const imei& a, const imei& b) noexcept { return a.str() == b.str(); }

 private:
  std::array<char, imei_max_digits> digits_{};
  std::uint8_t size_ = 0;
};

/// Whether `digits` is an IMEI as a device may announce it (15 or 16 ASCII digits): the
/// one rule every part of tgw applies, the handshake, the command line, the stores.
[[nodiscard]] inline bool valid_imei(std::string_view digits) noexcept {
  imei unused;
  return imei::parse(digits, unused) == errc::ok;
}

/// An IMEI as one number, for maps with an entry per device: a std::string key makes a
/// 64-byte node, a number a 32-byte one. The digits' value, with bit 63 set for 16
/// digits, so that 15 digits and the same value in 16 stay apart. Nothing unless
/// `digits` is 15 or 16 ASCII digits.
[[nodiscard]] std::optional<std::uint64_t> imei_key(std::string_view digits) noexcept;
/// The digits of a key made by imei_key.
[[nodiscard]] std::string imei_from_key(std::uint64_t key);

/// Size of the handshake packet: a 2-byte length and the IMEI digits.
inline constexpr std::size_t imei_packet_header = 2;

/// Parses the TCP handshake `uint16 length | ASCII digits`. Returns need_more while the
/// packet is incomplete; status.offset is the bytes consumed on success, or where the
/// fault is on error. The length is checked before the digits are awaited.
[[nodiscard]] decode_status parse_imei_packet(std::span<const std::uint8_t> in, imei& out) noexcept;

/// The one-byte server verdict to the handshake.
inline constexpr std::uint8_t imei_accepted = 0x01;
inline constexpr std::uint8_t imei_rejected = 0x00;

/// Codec 14 carries the IMEI as 8 bytes whose hex nibbles are the decimal digits,
/// left-padded with zero nibbles: 352093081452251 -> 03 52 09 30 81 45 22 51.
void imei_to_bcd(const imei& id, std::span<std::uint8_t, 8> out) noexcept;

/// Reads the 8-byte BCD IMEI of Codec 14/15, dropping leading zero nibbles until
/// 15 digits remain. Errors: bad_imei_digit for a nibble above 9.
[[nodiscard]] errc imei_from_bcd(std::span<const std::uint8_t, 8> in, imei& out) noexcept;

}  // namespace tgw::codecs
