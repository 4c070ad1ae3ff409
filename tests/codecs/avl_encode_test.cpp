#include "codecs/avl_encode.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/crc16.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs {
namespace {

using bytes = std::vector<std::uint8_t>;

std::string describe(const decode_status& s) {
  return std::string(to_string(s.code)) + " at " + std::to_string(s.offset);
}

class AvlRoundTrip : public ::testing::TestWithParam<codec_id> {};

TEST_P(AvlRoundTrip, EncodeDecodeGivesTheRecordsBack) {
  const codec_id codec = GetParam();
  std::mt19937_64 rng(0x7E170 + static_cast<unsigned>(codec));
  avl_packet packet;
  for (int iteration = 0; iteration < 500; ++iteration) {
    const std::vector<avl_record_data> records = test::random_records(rng, codec);
    bytes frame;
    ASSERT_EQ(encode_avl_frame(codec, records, frame), errc::ok);
    const decode_status s = decode_avl_frame(frame, packet);
    ASSERT_EQ(s.code, errc::ok) << describe(s) << " in " << test::to_hex(frame);
    EXPECT_EQ(s.offset, frame.size());
    EXPECT_EQ(packet.codec, static_cast<std::uint8_t>(codec));
    ASSERT_EQ(to_record_data(packet), records) << "iteration " << iteration;
    // The fields the encoder derives.
    EXPECT_EQ(load_be32(frame.data()), 0U);
    EXPECT_EQ(load_be32(frame.data() + 4), frame.size() - 12);
    EXPECT_EQ(frame[9], records.size());
    EXPECT_EQ(frame[frame.size() - 5], records.size());
    EXPECT_EQ(load_be32(frame.data() + frame.size() - 4),
              crc16_ibm(std::span(frame).subspan(8, frame.size() - 12)));
    for (std::size_t i = 0; i < records.size(); ++i)
      EXPECT_EQ(packet.records[i].declared_io_total, records[i].io.size());
  }
}

TEST_P(AvlRoundTrip, DataAloneRoundTrips) {
  const codec_id codec = GetParam();
  std::mt19937_64 rng(99 + static_cast<unsigned>(codec));
  avl_packet packet;
  for (int iteration = 0; iteration < 100; ++iteration) {
    const std::vector<avl_record_data> records = test::random_records(rng, codec);
    bytes data{0xAB, 0xCD};  // Appends after what is already there.
    ASSERT_EQ(encode_avl_data(codec, records, data), errc::ok);
    EXPECT_EQ(data[0], 0xAB);
    const decode_status s = decode_avl_data(data, 2, packet);
    ASSERT_EQ(s.code, errc::ok) << describe(s);
    ASSERT_EQ(to_record_data(packet), records);
  }
}

TEST_P(AvlRoundTrip, MaximumRecordCount) {
  const codec_id codec = GetParam();
  std::mt19937_64 rng(255);
  std::vector<avl_record_data> records(255);
  for (auto& r : records) r = test::random_record(rng, codec);
  bytes frame;
  ASSERT_EQ(encode_avl_frame(codec, records, frame), errc::ok);
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  EXPECT_EQ(to_record_data(packet), records);
}

INSTANTIATE_TEST_SUITE_P(Codecs, AvlRoundTrip,
                         ::testing::Values(codec_id::codec8, codec_id::codec8e, codec_id::codec16),
                         [](const ::testing::TestParamInfo<codec_id>& param) {
                           return std::string("codec") +
                                  std::string(codec_name(static_cast<std::uint8_t>(param.param)));
                         });

TEST(AvlEncode, OfficialCodec8FrameFromFields) {
  avl_record_data r;
  r.timestamp_ms = 1560161086000;
  r.priority = 1;
  r.event_io_id = 1;
  r.io = {{21, 1, 3, {}}, {1, 1, 1, {}}, {66, 2, 24079, {}}, {241, 4, 24602, {}}, {78, 8, 0, {}}};
  bytes frame;
  ASSERT_EQ(encode_avl_frame(codec_id::codec8, std::span(&r, 1), frame), errc::ok);
  EXPECT_EQ(test::to_hex(frame),
            test::upper_hex(
                test::official_vector("codec8_tcp_wiki_example_1").at("hex").get<std::string>()));
}

TEST(AvlEncode, GroupsValuesByWidth) {
  // Values given out of width order come out grouped 1, 2, 4, 8, keeping order in a group.
  avl_record_data r;
  r.io = {{8, 8, 0x0102030405060708, {}},
          {1, 1, 0xAA, {}},
          {4, 4, 0xDEADBEEF, {}},
          {2, 2, 0xBEEF, {}},
          {3, 1, 0xBB, {}}};
  bytes data;
  ASSERT_EQ(encode_avl_data(codec_id::codec8, std::span(&r, 1), data), errc::ok);
  avl_packet packet;
  ASSERT_TRUE(decode_avl_data(data, 0, packet).ok());
  const auto back = to_record_data(packet);
  ASSERT_EQ(back.size(), 1U);
  const std::vector<io_value> expected = {{1, 1, 0xAA, {}},
                                          {3, 1, 0xBB, {}},
                                          {2, 2, 0xBEEF, {}},
                                          {4, 4, 0xDEADBEEF, {}},
                                          {8, 8, 0x0102030405060708, {}}};
  EXPECT_EQ(back[0].io, expected);
}

TEST(AvlEncode, NxValuesOfCodec8Extended) {
  avl_record_data r;
  r.io = {{256, 0, 0, bytes(17, 0x00)}, {385, 0, 0, {}}, {0xFFFF, 0, 0, bytes(1000, 0x5A)}};
  bytes frame;
  ASSERT_EQ(encode_avl_frame(codec_id::codec8e, std::span(&r, 1), frame), errc::ok);
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  ASSERT_EQ(packet.io.size(), 3U);
  EXPECT_TRUE(packet.io[1].variable);
  EXPECT_EQ(packet.io[1].size, 0);
  EXPECT_EQ(packet.io[2].size, 1000);
  EXPECT_EQ(to_record_data(packet)[0], r);
}

TEST(AvlEncode, AppendsAfterExistingBytes) {
  std::mt19937_64 rng(3);
  const auto first = test::random_records(rng, codec_id::codec8);
  const auto second = test::random_records(rng, codec_id::codec16);
  bytes out;
  ASSERT_EQ(encode_avl_frame(codec_id::codec8, first, out), errc::ok);
  const std::size_t first_size = out.size();
  ASSERT_EQ(encode_avl_frame(codec_id::codec16, second, out), errc::ok);
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(std::span(out).first(first_size), packet).ok());
  EXPECT_EQ(to_record_data(packet), first);
  ASSERT_TRUE(decode_avl_frame(std::span(out).subspan(first_size), packet).ok());
  EXPECT_EQ(to_record_data(packet), second);
}

TEST(AvlEncode, ImeiPacket) {
  imei id;
  ASSERT_EQ(imei::parse("123456789012345", id), errc::ok);
  bytes out;
  encode_imei_packet(id, out);
  EXPECT_EQ(test::to_hex(out),
            test::upper_hex(test::official_vector("imei_handshake_123456789012345_fmxxxx_doc")
                                .at("hex")
                                .get<std::string>()));
}

/// Encodes `records` every way and checks each refuses with value_out_of_range and
/// leaves its output as it was.
void expect_refused(codec_id codec, const std::vector<avl_record_data>& records,
                    errc expected = errc::value_out_of_range) {
  const bytes before{0x01, 0x02, 0x03};
  bytes out = before;
  EXPECT_EQ(encode_avl_data(codec, records, out), expected);
  EXPECT_EQ(out, before);
  EXPECT_EQ(encode_avl_frame(codec, records, out), expected);
  EXPECT_EQ(out, before);
  imei id;
  ASSERT_EQ(imei::parse("352093086403655", id), errc::ok);
  EXPECT_EQ(encode_udp_datagram(0xCAFE, 1, id, codec, records, out), expected);
  EXPECT_EQ(out, before);
}

avl_record_data record_with(std::vector<io_value> io) {
  avl_record_data r;
  r.io = std::move(io);
  return r;
}

TEST(AvlEncodeErrors, NoRecords) {
  for (const codec_id codec : test::avl_codecs) expect_refused(codec, {});
}

TEST(AvlEncodeErrors, MoreThan255Records) {
  for (const codec_id codec : test::avl_codecs)
    expect_refused(codec, std::vector<avl_record_data>(256));
}

TEST(AvlEncodeErrors, NotAnAvlCodec) {
  for (const codec_id codec : {codec_id::codec12, codec_id::codec13, codec_id::codec14,
                               codec_id::codec15, static_cast<codec_id>(0x07)})
    expect_refused(codec, std::vector<avl_record_data>(1), errc::wrong_codec);
}

TEST(AvlEncodeErrors, IdAbove255InCodec8) {
  expect_refused(codec_id::codec8, {record_with({{256, 1, 0, {}}})});
  expect_refused(codec_id::codec8,
                 {avl_record_data{}, record_with({{1, 8, 0, {}}, {300, 2, 0, {}}})});
  avl_record_data r;
  r.event_io_id = 385;
  expect_refused(codec_id::codec8, {r});
  // The same ids are fine where ids have two bytes.
  bytes out;
  EXPECT_EQ(encode_avl_data(codec_id::codec8e, std::vector{r, record_with({{256, 1, 0, {}}})}, out),
            errc::ok);
  EXPECT_EQ(encode_avl_data(codec_id::codec16, std::vector{r, record_with({{256, 1, 0, {}}})}, out),
            errc::ok);
}

TEST(AvlEncodeErrors, NxOutsideCodec8Extended) {
  expect_refused(codec_id::codec8, {record_with({{1, 0, 0, {0x01}}})});
  expect_refused(codec_id::codec16, {record_with({{1, 0, 0, {0x01}}})});
  expect_refused(codec_id::codec16, {record_with({{1, 0, 0, {}}})});
}

TEST(AvlEncodeErrors, NxValueLongerThanItsLengthField) {
  expect_refused(codec_id::codec8e, {record_with({{1, 0, 0, bytes(0x10000, 0)}})});
}

TEST(AvlEncodeErrors, ValueWiderThanItsWidth) {
  for (const codec_id codec : test::avl_codecs) {
    expect_refused(codec, {record_with({{1, 1, 0x100, {}}})});
    expect_refused(codec, {record_with({{1, 2, 0x1'0000, {}}})});
    expect_refused(codec, {record_with({{1, 4, 0x1'0000'0000, {}}})});
    // The largest values of each width are fine.
    bytes out;
    EXPECT_EQ(encode_avl_data(codec,
                              std::vector{record_with({{1, 1, 0xFF, {}},
                                                       {2, 2, 0xFFFF, {}},
                                                       {3, 4, 0xFFFF'FFFF, {}},
                                                       {4, 8, ~std::uint64_t{0}, {}}})},
                              out),
              errc::ok);
  }
}

TEST(AvlEncodeErrors, WidthThatNoCodecHas) {
  for (const std::uint8_t width : {std::uint8_t{3}, std::uint8_t{5}, std::uint8_t{16}})
    for (const codec_id codec : test::avl_codecs)
      expect_refused(codec, {record_with({{1, width, 0, {}}})});
}

TEST(AvlEncodeErrors, MoreValuesThanTheCountFieldHolds) {
  for (const codec_id codec : {codec_id::codec8, codec_id::codec16}) {
    // 255 values in one group is the most a one-byte count holds.
    bytes out;
    EXPECT_EQ(encode_avl_data(
                  codec, std::vector{record_with(std::vector<io_value>(255, {1, 1, 0, {}}))}, out),
              errc::ok);
    expect_refused(codec, {record_with(std::vector<io_value>(256, {1, 1, 0, {}}))});
    // 200 + 100 values fit their groups but not the one-byte N total.
    std::vector<io_value> io(200, {1, 1, 0, {}});
    io.insert(io.end(), 100, {2, 2, 0, {}});
    expect_refused(codec, {record_with(io)});
  }
  bytes out;
  EXPECT_EQ(
      encode_avl_data(codec_id::codec8e,
                      std::vector{record_with(std::vector<io_value>(300, {1, 1, 0, {}}))}, out),
      errc::ok);
}

}  // namespace
}  // namespace tgw::codecs
