#include "actors/domain/packet_rendering.hpp"

#include <gtest/gtest.h>

#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"

namespace tgw::domain {
namespace {

using ports::packet_job;
using ports::record_fields;

codecs::avl_packet decoded(const std::vector<codecs::avl_record_data>& records,
                           std::vector<std::uint8_t>& frame) {
  EXPECT_EQ(codecs::encode_avl_frame(codecs::codec_id::codec8e, records, frame), codecs::errc::ok);
  codecs::avl_packet packet;
  EXPECT_TRUE(codecs::decode_avl_frame(frame, packet, codecs::crc_policy::strict).ok());
  return packet;
}

// Each record becomes its stream fields, in order, with the IO elements as the format 4
// array: every fixed-width value a decimal string whatever its size, with that size
// after it; NX bytes a {"hex":...} object.
TEST(PacketRendering, RendersEveryFieldAndTheIoElementsAsJson) {
  codecs::avl_record_data a;
  a.timestamp_ms = 1'700'000'000'123;
  a.priority = 2;
  a.longitude = -252616688;
  a.latitude = 546992512;
  a.altitude = -5;
  a.angle = 359;
  a.satellites = 12;
  a.speed = 88;
  a.event_io_id = 239;
  a.io = {{239, 1, 1, {}},
          {66, 2, 12345, {}},
          {16, 4, 987654, {}},
          {78, 8, 18446744073709551615ULL, {}},
          {11, 8, 9007199254740991ULL, {}},
          {238, 8, 9007199254740992ULL, {}},
          {281, 0, 0, {0xde, 0xad, 0x01}}};
  codecs::avl_record_data b;
  b.timestamp_ms = 1'700'000'001'000;
  std::vector<std::uint8_t> frame;
  const auto packet = decoded({a, b}, frame);
  const packet_job job = render_packet("356307042441013", packet, frame);
  EXPECT_EQ(job.imei, "356307042441013");
  EXPECT_EQ(job.fingerprint, fingerprint(frame));
  ASSERT_EQ(job.records.size(), 2U);
  EXPECT_EQ(job.records[0],
            (record_fields{"1700000000123", "2", "-252616688", "546992512", "-5", "359", "12", "88",
                           "239",
                           R"([[239,"1",1],[66,"12345",2],[16,"987654",4],)"
                           R"([78,"18446744073709551615",8],[11,"9007199254740991",8],)"
                           R"([238,"9007199254740992",8],[281,{"hex":"DEAD01"}]])",
                           ""}));
  EXPECT_EQ(job.codec, "8E");
  EXPECT_EQ(job.records[1][0], "1700000001000");
  EXPECT_EQ(job.records[1][9], "[]");
}

// The cases format 2 could not tell apart: an 8-byte value of 2^53 + 1 and NX bytes
// whose hex is the same digits on the same id, and an id that occurs twice.
TEST(PacketRendering, ValuesFormat2ConfusedStayApart) {
  codecs::avl_record_data a;
  a.io = {{1, 1, 0, {}},
          {1, 1, 1, {}},
          {11, 8, 9007199254740993ULL, {}},
          {11, 0, 0, {0x90, 0x07, 0x19, 0x92, 0x54, 0x74, 0x09, 0x93}}};
  std::vector<std::uint8_t> frame;
  const auto packet = decoded({a}, frame);
  const packet_job job = render_packet("356307042441013", packet, frame);
  ASSERT_EQ(job.records.size(), 1U);
  EXPECT_EQ(job.records[0][9],
            R"([[1,"0",1],[1,"1",1],[11,"9007199254740993",8],[11,{"hex":"9007199254740993"}]])");
}

// Codec 16 records carry their generation type; the packet names its codec.
TEST(PacketRendering, Codec16RecordsKeepTheirGenerationType) {
  codecs::avl_record_data a;
  a.timestamp_ms = 1'700'000'000'000;
  a.generation_type = 5;
  a.io = {{239, 1, 1, {}}};
  codecs::avl_record_data b = a;
  b.generation_type = 7;
  std::vector<std::uint8_t> frame;
  const std::vector<codecs::avl_record_data> records = {a, b};
  ASSERT_EQ(codecs::encode_avl_frame(codecs::codec_id::codec16, records, frame), codecs::errc::ok);
  codecs::avl_packet packet;
  ASSERT_TRUE(codecs::decode_avl_frame(frame, packet, codecs::crc_policy::strict).ok());
  const packet_job job = render_packet("356307042441013", packet, frame);
  EXPECT_EQ(job.codec, "16");
  ASSERT_EQ(job.records.size(), 2U);
  EXPECT_EQ(job.records[0][10], "5");
  EXPECT_EQ(job.records[1][10], "7");
}

// The size on the wire is what a signed value sign-extends from: IO 72 (a Dallas
// temperature, 4 bytes in the FMB table) sent in 2 bytes as FFF6 is -10, not 65526.
TEST(PacketRendering, EachFixedWidthValueKeepsItsWireSize) {
  codecs::avl_record_data a;
  a.io = {{72, 2, 0xFFF6, {}}, {72, 4, 0xFFFFFFF6, {}}};
  std::vector<std::uint8_t> frame;
  const auto packet = decoded({a}, frame);
  const packet_job job = render_packet("356307042441013", packet, frame);
  ASSERT_EQ(job.records.size(), 1U);
  EXPECT_EQ(job.records[0][9], R"([[72,"65526",2],[72,"4294967286",4]])");
}

TEST(PacketRendering, TheFingerprintIsTheFramesFnv1a64InHex) {
  const std::vector<std::uint8_t> empty;
  EXPECT_EQ(fingerprint(empty), "CBF29CE484222325");
  const std::vector<std::uint8_t> a{'a'};
  EXPECT_EQ(fingerprint(a), "AF63DC4C8601EC8C");
}

}  // namespace
}  // namespace tgw::domain
