#include "codecs/crc16.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "tests/codecs/hex.hpp"
#include "tests/codecs/printers.hpp"

namespace tgw::codecs {
namespace {

// The bitwise definition from the protocol notes (section 8), kept deliberately naive
// so that it cannot share a mistake with the table-driven implementation.
std::uint16_t reference_crc(std::span<const std::uint8_t> data) {
  unsigned crc = 0;
  for (std::uint8_t b : data) {
    crc ^= b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1U) ? (crc >> 1) ^ 0xA001U : crc >> 1;
  }
  return static_cast<std::uint16_t>(crc);
}

std::span<const std::uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

TEST(Crc16, CheckValueOfTheCatalogue) {
  EXPECT_EQ(crc16_ibm(bytes_of("123456789")), 0xBB3D);
}

TEST(Crc16, EmptyInputIsTheInitialValue) {
  EXPECT_EQ(crc16_ibm({}), 0x0000);
}

TEST(Crc16, EmptyAvlDataOfCodec8) {
  EXPECT_EQ(crc16_ibm(test::from_hex("080000")), 0xC281);
}

TEST(Crc16, EmptyAvlDataOfCodec8Extended) {
  EXPECT_EQ(crc16_ibm(test::from_hex("8E0000")), 0x2B60);
}

TEST(Crc16, WikiCodec12GetinfoData) {
  // DataSize bytes of 000000000000000F0C010500000007676574696E666F0100004312.
  EXPECT_EQ(crc16_ibm(test::from_hex("0C010500000007676574696E666F01")), 0x4312);
}

TEST(Crc16, ReferenceSelfCheck) {
  // Guards the reference itself, so the comparison below compares against something right.
  EXPECT_EQ(reference_crc(bytes_of("123456789")), 0xBB3D);
}

TEST(Crc16, MatchesBitwiseReferenceForEveryLengthUpTo100) {
  std::mt19937_64 rng(0xC4C16);
  for (std::size_t length = 0; length <= 100; ++length) {
    for (int round = 0; round < 20; ++round) {
      std::vector<std::uint8_t> data(length);
      for (std::uint8_t& b : data) b = static_cast<std::uint8_t>(rng());
      ASSERT_EQ(crc16_ibm(data), reference_crc(data))
          << "length " << length << ": " << test::to_hex(data);
    }
  }
}

TEST(Crc16, MatchesReferenceAtEveryAlignment) {
  // The fast path loads eight bytes at a time; frames start anywhere in a socket buffer.
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> buffer(1400);
  for (std::uint8_t& b : buffer) b = static_cast<std::uint8_t>(rng());
  const std::span<const std::uint8_t> all(buffer);
  for (std::size_t start = 0; start < 16; ++start)
    for (std::size_t length : {1U,  7U,  8U,   9U,   15U,  16U,  17U,  63U,  64U,   65U,
                               79U, 80U, 127U, 128U, 129U, 255U, 256U, 257U, 1280U, 1383U})
      ASSERT_EQ(crc16_ibm(all.subspan(start, length)), reference_crc(all.subspan(start, length)))
          << "start " << start << " length " << length;
}

TEST(Crc16, MatchesReferenceForLongerBuffers) {
  // Frames of a few hundred bytes to 2 KiB camera chunks, every length on the way.
  std::mt19937_64 rng(2079);
  for (std::size_t length = 101; length <= 2100; ++length) {
    std::vector<std::uint8_t> data(length);
    for (std::uint8_t& b : data) b = static_cast<std::uint8_t>(rng());
    ASSERT_EQ(crc16_ibm(data), reference_crc(data)) << "length " << length;
  }
}

TEST(Crc16, AllOnesAndAllZeroBuffers) {
  for (std::size_t length = 0; length <= 40; ++length) {
    const std::vector<std::uint8_t> zeros(length, 0x00);
    const std::vector<std::uint8_t> ones(length, 0xFF);
    EXPECT_EQ(crc16_ibm(zeros), 0x0000) << length;
    EXPECT_EQ(crc16_ibm(ones), reference_crc(ones)) << length;
  }
}

}  // namespace
}  // namespace tgw::codecs
