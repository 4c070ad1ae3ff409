#include "codecs/imei.hpp"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/printers.hpp"

namespace tgw::codecs {
namespace {

imei make_imei(std::string_view digits) {
  imei id;
  EXPECT_EQ(imei::parse(digits, id), errc::ok) << digits;
  return id;
}

TEST(Imei, ParsesFifteenAndSixteenDigits) {
  imei id;
  ASSERT_EQ(imei::parse("356307042441013", id), errc::ok);
  EXPECT_EQ(id.str(), "356307042441013");
  EXPECT_FALSE(id.empty());
  ASSERT_EQ(imei::parse("3563070424410131", id), errc::ok);
  EXPECT_EQ(id.str(), "3563070424410131");
}

TEST(Imei, DefaultIsEmpty) {
  const imei id;
  EXPECT_TRUE(id.empty());
  EXPECT_EQ(id.str(), "");
}

TEST(Imei, RejectsLengthOutside15To16) {
  imei id = make_imei("123456789012345");
  EXPECT_EQ(imei::parse("", id), errc::bad_imei_length);
  EXPECT_EQ(imei::parse("12345678901234", id), errc::bad_imei_length);
  EXPECT_EQ(imei::parse("12345678901234567", id), errc::bad_imei_length);
  // A refused parse leaves the previous value alone.
  EXPECT_EQ(id.str(), "123456789012345");
}

TEST(Imei, RejectsNonDigits) {
  imei id;
  EXPECT_EQ(imei::parse("12345678901234A", id), errc::bad_imei_digit);
  EXPECT_EQ(imei::parse(" 23456789012345", id), errc::bad_imei_digit);
  EXPECT_EQ(imei::parse("1234567890123/5", id), errc::bad_imei_digit);
  EXPECT_EQ(imei::parse("1234567890123:5", id), errc::bad_imei_digit);
  EXPECT_TRUE(id.empty());
}

TEST(Imei, Equality) {
  EXPECT_EQ(make_imei("352093081452251"), make_imei("352093081452251"));
  EXPECT_FALSE(make_imei("352093081452251") == make_imei("352093081452252"));
  EXPECT_FALSE(make_imei("352093081452251") == make_imei("3520930814522510"));
}

TEST(ImeiKey, RoundTripsFifteenAndSixteenDigitsLeadingZerosIncluded) {
  for (const char* digits :
       {"356307042441013", "000000000000000", "999999999999999", "3563070424410131",
        "0000000000000000", "0356307042441013", "9999999999999999"}) {
    const auto key = tgw::codecs::imei_key(digits);
    ASSERT_TRUE(key.has_value()) << digits;
    EXPECT_EQ(tgw::codecs::imei_from_key(*key), digits);
  }
}

TEST(ImeiKey, FifteenDigitsAndTheSameValueInSixteenAreDifferentKeys) {
  EXPECT_NE(tgw::codecs::imei_key("035630704244101"), tgw::codecs::imei_key("0035630704244101"));
}

TEST(ImeiKey, RefusesWhatIsNotAnImei) {
  for (const char* text :
       {"", "35630704244101", "35630704244101312", "35630704244101x", "dev-1", " 356307042441013"})
    EXPECT_FALSE(tgw::codecs::imei_key(text).has_value()) << text;
}

TEST(ImeiPacket, ParsesWikiHandshake) {
  const auto packet = test::from_hex("000F333536333037303432343431303133");
  imei id;
  const decode_status s = parse_imei_packet(packet, id);
  ASSERT_EQ(s.code, errc::ok);
  EXPECT_EQ(s.offset, 17U);
  EXPECT_EQ(id.str(), "356307042441013");
}

TEST(ImeiPacket, SixteenDigitImeisv) {
  const auto packet = test::from_hex("001033353633303730343234343130313331");
  imei id;
  const decode_status s = parse_imei_packet(packet, id);
  ASSERT_EQ(s.code, errc::ok);
  EXPECT_EQ(s.offset, 18U);
  EXPECT_EQ(id.str(), "3563070424410131");
}

TEST(ImeiPacket, NeedsMoreForEveryPrefix) {
  const auto packet = test::from_hex("000F333536333037303432343431303133");
  for (std::size_t n = 0; n < packet.size(); ++n) {
    imei id;
    const decode_status s = parse_imei_packet(std::span(packet).first(n), id);
    EXPECT_EQ(s.code, errc::need_more) << n;
    EXPECT_EQ(s.offset, n);
    EXPECT_TRUE(id.empty());
  }
}

TEST(ImeiPacket, ConsumesOnlyItsOwnBytes) {
  // The first AVL frame may arrive in the same segment as the handshake.
  auto packet = test::from_hex("000F333536333037303432343431303133000000000000");
  imei id;
  const decode_status s = parse_imei_packet(packet, id);
  ASSERT_EQ(s.code, errc::ok);
  EXPECT_EQ(s.offset, 17U);
}

TEST(ImeiPacket, RefusesBadLengthBeforeTheDigitsArrive) {
  for (const char* header : {"0000", "000E", "0011", "0100", "FFFF", "0F00"}) {
    imei id;
    const auto bytes = test::from_hex(header);
    const decode_status s = parse_imei_packet(bytes, id);
    EXPECT_EQ(s.code, errc::bad_imei_length) << header;
    EXPECT_EQ(s.offset, 0U) << header;
  }
}

TEST(ImeiPacket, RefusesNonDigitAtItsOffset) {
  const auto good = test::from_hex("000F333536333037303432343431303133");
  for (std::size_t i = 0; i < 15; ++i) {
    for (std::uint8_t bad : {std::uint8_t{0x00}, std::uint8_t{'/'}, std::uint8_t{':'},
                             std::uint8_t{'A'}, std::uint8_t{0xFF}}) {
      auto packet = good;
      packet[2 + i] = bad;
      imei id;
      const decode_status s = parse_imei_packet(packet, id);
      EXPECT_EQ(s.code, errc::bad_imei_digit) << i;
      EXPECT_EQ(s.offset, 2 + i);
    }
  }
}

TEST(ImeiPacket, EncodeRoundTrip) {
  std::vector<std::uint8_t> out{0xAA};
  encode_imei_packet(make_imei("356307042441013"), out);
  EXPECT_EQ(test::to_hex(out), "AA000F333536333037303432343431303133");
  const std::span<const std::uint8_t> packet = std::span(out).subspan(1);
  imei id;
  ASSERT_EQ(parse_imei_packet(packet, id).code, errc::ok);
  EXPECT_EQ(id.str(), "356307042441013");
}

TEST(ImeiBcd, Codec14ExampleEncodes) {
  std::array<std::uint8_t, 8> bcd{};
  imei_to_bcd(make_imei("352093081452251"), bcd);
  EXPECT_EQ(test::to_hex(bcd), "0352093081452251");
}

TEST(ImeiBcd, Codec14ExampleDecodes) {
  const auto bcd = test::from_hex("0352093081452251");
  imei id;
  ASSERT_EQ(imei_from_bcd(std::span<const std::uint8_t, 8>(bcd.data(), 8), id), errc::ok);
  EXPECT_EQ(id.str(), "352093081452251");
}

TEST(ImeiBcd, SixteenDigitsUseEveryNibble) {
  std::array<std::uint8_t, 8> bcd{};
  imei_to_bcd(make_imei("3520930814522519"), bcd);
  EXPECT_EQ(test::to_hex(bcd), "3520930814522519");
  imei id;
  ASSERT_EQ(imei_from_bcd(bcd, id), errc::ok);
  EXPECT_EQ(id.str(), "3520930814522519");
}

TEST(ImeiBcd, RandomRoundTrips) {
  std::mt19937_64 rng(15);
  for (int i = 0; i < 1000; ++i) {
    std::string digits(15, '0');
    for (char& c : digits) c = static_cast<char>('0' + rng() % 10);
    std::array<std::uint8_t, 8> bcd{};
    imei_to_bcd(make_imei(digits), bcd);
    EXPECT_EQ(test::to_hex(bcd), "0" + digits);
    imei back;
    ASSERT_EQ(imei_from_bcd(bcd, back), errc::ok);
    EXPECT_EQ(back.str(), digits);
  }
}

TEST(ImeiBcd, RefusesNibbleAboveNine) {
  for (std::size_t nibble = 0; nibble < 16; ++nibble) {
    auto bcd = test::from_hex("0352093081452251");
    const std::size_t byte = nibble / 2;
    bcd[byte] = nibble % 2 == 0 ? static_cast<std::uint8_t>((bcd[byte] & 0x0F) | 0xA0)
                                : static_cast<std::uint8_t>((bcd[byte] & 0xF0) | 0x0F);
    imei id;
    EXPECT_EQ(imei_from_bcd(std::span<const std::uint8_t, 8>(bcd.data(), 8), id),
              errc::bad_imei_digit)
        << nibble;
  }
}

}  // namespace
}  // namespace tgw::codecs
