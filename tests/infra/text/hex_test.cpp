#include "infra/text/hex.hpp"

#include <gtest/gtest.h>

namespace tgw::infra {
namespace {

TEST(Hex, RoundTripsBytes) {
  const std::vector<std::uint8_t> bytes{0x00, 0x0F, 0xAB, 0xFF};
  EXPECT_EQ(to_hex(bytes), "000FABFF");
  EXPECT_EQ(parse_hex("000fabff"), bytes);
}

TEST(Hex, SkipsSeparatorsBetweenPairs) {
  const std::vector<std::uint8_t> bytes{0xCA, 0xFE, 0x01};
  EXPECT_EQ(parse_hex("0xCA FE:01\n"), bytes);
  EXPECT_EQ(parse_hex("ca-fe-01"), bytes);
}

TEST(Hex, RefusesOddDigitsAndNonHex) {
  EXPECT_FALSE(parse_hex("ABC").has_value());
  EXPECT_FALSE(parse_hex("zz").has_value());
  EXPECT_FALSE(parse_hex("A B").has_value());
}

TEST(Hex, EmptyInputIsEmpty) {
  EXPECT_EQ(parse_hex(""), std::vector<std::uint8_t>{});
}

}  // namespace
}  // namespace tgw::infra
