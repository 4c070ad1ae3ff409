#include "codecs/udp.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs {
namespace {

using bytes = std::vector<std::uint8_t>;

std::string describe(const decode_status& s) {
  return std::string(to_string(s.code)) + " at " + std::to_string(s.offset);
}

imei make_imei(std::string_view digits) {
  imei id;
  EXPECT_EQ(imei::parse(digits, id), errc::ok);
  return id;
}

/// Sets the length field of a datagram to match its size.
void fix_udp_length(bytes& datagram) {
  store_be16(datagram.data(), static_cast<std::uint16_t>(datagram.size() - 2));
}

class UdpRoundTrip : public ::testing::TestWithParam<codec_id> {};

TEST_P(UdpRoundTrip, EncodeDecodeGivesTheRecordsBack) {
  const codec_id codec = GetParam();
  std::mt19937_64 rng(0x0D9 + static_cast<unsigned>(codec));
  avl_packet packet;
  for (int iteration = 0; iteration < 500; ++iteration) {
    const auto records = test::random_records(rng, codec);
    const auto packet_id = static_cast<std::uint16_t>(rng());
    const auto avl_packet_id = static_cast<std::uint8_t>(rng());
    std::string digits(15 + rng() % 2, '0');
    for (char& c : digits) c = static_cast<char>('0' + rng() % 10);
    const imei device = make_imei(digits);
    bytes datagram;
    ASSERT_EQ(encode_udp_datagram(packet_id, avl_packet_id, device, codec, records, datagram),
              errc::ok);
    udp_header header;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    ASSERT_EQ(s.code, errc::ok) << describe(s) << " in " << test::to_hex(datagram);
    EXPECT_EQ(s.offset, datagram.size());
    EXPECT_EQ(header.length, datagram.size() - 2);
    EXPECT_EQ(header.packet_id, packet_id);
    EXPECT_EQ(header.packet_type, 0x01);
    EXPECT_EQ(header.avl_packet_id, avl_packet_id);
    EXPECT_EQ(header.device, device);
    EXPECT_FALSE(packet.has_crc);
    EXPECT_EQ(packet.codec, static_cast<std::uint8_t>(codec));
    EXPECT_EQ(packet.bytes.data(), datagram.data());
    ASSERT_EQ(to_record_data(packet), records) << "iteration " << iteration;
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, UdpRoundTrip,
                         ::testing::Values(codec_id::codec8, codec_id::codec8e, codec_id::codec16),
                         [](const ::testing::TestParamInfo<codec_id>& param) {
                           return std::string("codec") +
                                  std::string(codec_name(static_cast<std::uint8_t>(param.param)));
                         });

TEST(Udp, WikiCodec8Datagram) {
  const bytes datagram = test::official_bytes("codec8_udp_wiki_example");
  udp_header header;
  avl_packet packet;
  const decode_status s = decode_udp_datagram(datagram, header, packet);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_EQ(header.length, 0x3D);
  EXPECT_EQ(header.packet_id, 0xCAFE);
  EXPECT_EQ(header.packet_type, 0x01);
  EXPECT_EQ(header.avl_packet_id, 0x05);
  EXPECT_EQ(header.device.str(), "352093086403655");
  ASSERT_EQ(packet.records.size(), 1U);
  const auto response = udp_response(header.packet_id, header.avl_packet_id,
                                     static_cast<std::uint8_t>(packet.records.size()));
  EXPECT_EQ(test::to_hex(response), "0005CAFE010501");
}

TEST(Udp, ResponseEchoesIds) {
  EXPECT_EQ(test::to_hex(udp_response(0x0000, 0x00, 0)), "00050000010000");
  EXPECT_EQ(test::to_hex(udp_response(0xABCD, 0xDD, 2)), "0005ABCD01DD02");
  EXPECT_EQ(test::to_hex(udp_response(0xFFFF, 0xFF, 255)), "0005FFFF01FFFF");
}

TEST(UdpErrors, ShortDatagram) {
  const bytes datagram = test::official_bytes("codec8_udp_wiki_example");
  for (std::size_t n = 0; n < udp_imei_offset; ++n) {
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(std::span(datagram).first(n), header, packet);
    EXPECT_EQ(s.code, errc::truncated) << n;
    EXPECT_EQ(s.offset, n);
  }
}

TEST(UdpErrors, EveryPrefixIsRefused) {
  std::mt19937_64 rng(5);
  std::vector<bytes> datagrams = {test::official_bytes("codec8_udp_wiki_example"),
                                  test::official_bytes("codec8e_udp_wiki_example"),
                                  test::official_bytes("codec16_udp_wiki_example_corrected")};
  for (const codec_id codec : test::avl_codecs) {
    bytes d;
    ASSERT_EQ(encode_udp_datagram(1, 2, make_imei("123456789012345"), codec,
                                  test::random_records(rng, codec), d),
              errc::ok);
    datagrams.push_back(std::move(d));
  }
  for (const bytes& datagram : datagrams) {
    for (std::size_t n = 0; n < datagram.size(); ++n) {
      udp_header header;
      avl_packet packet;
      const decode_status s = decode_udp_datagram(std::span(datagram).first(n), header, packet);
      // The length field notices first; a datagram never arrives in pieces.
      ASSERT_EQ(s.code, n < udp_imei_offset ? errc::truncated : errc::length_mismatch) << n;
      // With the length field patched to agree, the AVL data itself is truncated.
      if (n >= udp_imei_offset + 15) {
        bytes cut(datagram.begin(), datagram.begin() + static_cast<std::ptrdiff_t>(n));
        fix_udp_length(cut);
        const decode_status t = decode_udp_datagram(cut, header, packet);
        ASSERT_EQ(t.code, errc::truncated) << n << ": " << describe(t);
      }
    }
  }
}

TEST(UdpErrors, LengthFieldDisagrees) {
  for (const int delta : {-1, 1, 100, -60}) {
    bytes datagram = test::official_bytes("codec8_udp_wiki_example");
    store_be16(datagram.data(), static_cast<std::uint16_t>(load_be16(datagram.data()) + delta));
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    EXPECT_EQ(s.code, errc::length_mismatch) << delta;
    EXPECT_EQ(s.offset, 0U);
  }
  bytes datagram = test::official_bytes("codec8_udp_wiki_example");
  datagram.push_back(0x00);  // Trailing garbage.
  udp_header header;
  avl_packet packet;
  EXPECT_EQ(decode_udp_datagram(datagram, header, packet).code, errc::length_mismatch);
}

TEST(UdpErrors, TrailingGarbageCountedByTheLength) {
  bytes datagram = test::official_bytes("codec8e_udp_wiki_example");
  const std::size_t nod2 = datagram.size() - 1;
  datagram.push_back(0x00);
  fix_udp_length(datagram);
  udp_header header;
  avl_packet packet;
  const decode_status s = decode_udp_datagram(datagram, header, packet);
  EXPECT_EQ(s.code, errc::length_mismatch) << describe(s);
  EXPECT_EQ(s.offset, nod2);
}

TEST(UdpErrors, BadImeiLength) {
  for (const std::uint16_t length :
       {std::uint16_t{0}, std::uint16_t{14}, std::uint16_t{17}, std::uint16_t{0xFFFF}}) {
    bytes datagram = test::official_bytes("codec8_udp_wiki_example");
    store_be16(datagram.data() + 6, length);
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    EXPECT_EQ(s.code, errc::bad_imei_length) << length;
    EXPECT_EQ(s.offset, 6U);
  }
}

TEST(UdpErrors, ImeiLongerThanTheDatagram) {
  // 16 digits announced, but the datagram ends after 12: consistent length field.
  bytes datagram = test::from_hex("0012CAFE01050010313233343536373839303132");
  udp_header header;
  avl_packet packet;
  const decode_status s = decode_udp_datagram(datagram, header, packet);
  EXPECT_EQ(s.code, errc::truncated) << describe(s);
  EXPECT_EQ(s.offset, 6U);
}

TEST(UdpErrors, BadImeiDigit) {
  for (std::size_t i = 0; i < 15; ++i) {
    bytes datagram = test::official_bytes("codec8_udp_wiki_example");
    datagram[udp_imei_offset + i] = 'x';
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    EXPECT_EQ(s.code, errc::bad_imei_digit) << i;
    EXPECT_EQ(s.offset, udp_imei_offset + i);
  }
}

TEST(UdpErrors, AvlFaultsCountFromTheDatagramStart) {
  const bytes original = test::official_bytes("codec16_udp_wiki_example_corrected");
  const std::size_t codec_offset = udp_imei_offset + 15;
  {
    bytes datagram = original;
    datagram.back() = 2;
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    EXPECT_EQ(s.code, errc::record_count_mismatch);
    EXPECT_EQ(s.offset, datagram.size() - 1);
  }
  {
    bytes datagram = original;
    datagram[codec_offset] = 0x0C;
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    EXPECT_EQ(s.code, errc::wrong_codec);
    EXPECT_EQ(s.offset, codec_offset);
  }
  {
    bytes datagram = original;
    datagram[codec_offset] = 0x42;
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    EXPECT_EQ(s.code, errc::unknown_codec);
    EXPECT_EQ(s.offset, codec_offset);
  }
  {
    bytes datagram(original.begin(), original.begin() + codec_offset);
    datagram.insert(datagram.end(), {0x10, 0x00, 0x00});
    fix_udp_length(datagram);
    udp_header header;
    avl_packet packet;
    const decode_status s = decode_udp_datagram(datagram, header, packet);
    EXPECT_EQ(s.code, errc::zero_records);
    EXPECT_EQ(s.offset, codec_offset + 1);
  }
}

TEST(UdpEncode, DatagramTooLargeForItsLengthField) {
  avl_record_data r;
  r.io = {{1, 0, 0, bytes(0xFFFF, 0x11)}};
  bytes out{0x42};
  EXPECT_EQ(encode_udp_datagram(1, 1, make_imei("123456789012345"), codec_id::codec8e,
                                std::vector{r}, out),
            errc::value_out_of_range);
  EXPECT_EQ(out, bytes{0x42});
  // The same record fits a TCP frame, whose length field has 32 bits.
  EXPECT_EQ(encode_avl_frame(codec_id::codec8e, std::vector{r}, out), errc::ok);
}

TEST(UdpEncode, ReproducesTheWikiDatagram) {
  const bytes official = test::official_bytes("codec8e_udp_wiki_example");
  udp_header header;
  avl_packet packet;
  ASSERT_TRUE(decode_udp_datagram(official, header, packet).ok());
  bytes again;
  ASSERT_EQ(encode_udp_datagram(header.packet_id, header.avl_packet_id, header.device,
                                codec_id::codec8e, to_record_data(packet), again),
            errc::ok);
  EXPECT_EQ(test::to_hex(again), test::to_hex(official));
}

}  // namespace
}  // namespace tgw::codecs
