#include "infra/cli/frame_inspector.hpp"

#include <gtest/gtest.h>

#include "infra/text/hex.hpp"

namespace tgw::infra {
namespace {

constexpr const char* wiki_codec8 =
    "000000000000003608010000016B40D8EA30010000000000000000000000000000000105021503010101425E0F01"
    "F10000601A014E0000000000000000010000C7CF";
constexpr const char* imei_packet = "000F333536333037303432343431303133";
constexpr const char* codec8_udp =
    "003DCAFE0105000F33353230393330383634303336353508010000016B4F815B300100000000000000000000000000"
    "00"
    "000103021503010101425DBC000001";
constexpr const char* codec12_response =
    "00000000000000370C01060000002F4449313A31204449323A30204449333A302041494E313A302041494E323A3136"
    "39"
    "323420444F313A3020444F323A3101000066E3";

inspection inspect_hex(std::string_view hex, inspect_options options = {}) {
  const auto bytes = parse_hex(hex);
  EXPECT_TRUE(bytes.has_value());
  return inspect_blob(*bytes, options);
}

TEST(FrameInspector, DescribesTheWikiCodec8Record) {
  const inspection r = inspect_hex(wiki_codec8);
  ASSERT_FALSE(r.failed);
  ASSERT_EQ(r.frames.size(), 1U);
  const json& f = r.frames[0];
  EXPECT_EQ(f["kind"], "avl");
  EXPECT_EQ(f["codec"], "8");
  EXPECT_EQ(f["crc"]["ok"], true);
  EXPECT_EQ(f["ack"], "00000001");
  const json& rec = f["records"][0];
  EXPECT_EQ(rec["timestamp"], "2019-06-10T10:04:46.000Z");
  EXPECT_EQ(rec["priority"], 1);
  EXPECT_EQ(rec["event_io_id"], 1);
  const json expected_io =
      json::parse(R"([{"id":21,"size":1,"value":"3"},{"id":1,"size":1,"value":"1"},)"
                  R"({"id":66,"size":2,"value":"24079"},{"id":241,"size":4,"value":"24602"},)"
                  R"({"id":78,"size":8,"value":"0"}])");
  EXPECT_EQ(rec["io"], expected_io);
}

TEST(FrameInspector, ReadsAHandshakeFollowedByFramesAsOneStream) {
  const std::string stream = std::string(imei_packet) + wiki_codec8 + "FF" + wiki_codec8;
  const inspection r = inspect_hex(stream);
  ASSERT_FALSE(r.failed);
  ASSERT_EQ(r.frames.size(), 4U);
  EXPECT_EQ(r.frames[0]["kind"], "imei");
  EXPECT_EQ(r.frames[0]["imei"], "356307042441013");
  EXPECT_EQ(r.frames[0]["reply"], "01");
  EXPECT_EQ(r.frames[1]["kind"], "avl");
  EXPECT_EQ(r.frames[2]["kind"], "keepalive");
  EXPECT_EQ(r.frames[3]["kind"], "avl");
}

TEST(FrameInspector, AnswersUdpWithTheSevenByteResponse) {
  const inspection r = inspect_hex(codec8_udp);
  ASSERT_FALSE(r.failed);
  ASSERT_EQ(r.frames.size(), 1U);
  EXPECT_EQ(r.frames[0]["transport"], "udp");
  EXPECT_EQ(r.frames[0]["imei"], "352093086403655");
  EXPECT_EQ(r.frames[0]["response"], "0005CAFE010501");
}

TEST(FrameInspector, NeverAcksACommandResponse) {
  const inspection r = inspect_hex(codec12_response);
  ASSERT_FALSE(r.failed);
  EXPECT_EQ(r.frames[0]["kind"], "command");
  EXPECT_EQ(r.frames[0]["type_name"], "response");
  EXPECT_EQ(r.frames[0]["payload_text"], "DI1:1 DI2:0 DI3:0 AIN1:0 AIN2:16924 DO1:0 DO2:1");
  EXPECT_TRUE(r.frames[0]["ack"].is_null());
}

TEST(FrameInspector, ReportsABadCrcWithItsOffset) {
  std::string bad = wiki_codec8;
  bad.replace(bad.size() - 4, 4, "0000");
  const inspection r = inspect_hex(bad);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.frames[0]["kind"], "error");
  EXPECT_EQ(r.frames[0]["error"], "bad_crc");
  EXPECT_EQ(r.frames[0]["offset"], 62);
  EXPECT_EQ(r.frames[0]["crc"]["computed"], "C7CF");
}

TEST(FrameInspector, DecodesABadCrcWhenToldToIgnoreIt) {
  std::string bad = wiki_codec8;
  bad.replace(bad.size() - 4, 4, "0000");
  inspect_options options;
  options.crc = codecs::crc_policy::ignore;
  const inspection r = inspect_hex(bad, options);
  ASSERT_FALSE(r.failed);
  EXPECT_EQ(r.frames[0]["kind"], "avl");
  EXPECT_EQ(r.frames[0]["crc"]["ok"], false);
}

TEST(FrameInspector, ReportsATruncatedStream) {
  const std::string cut = std::string(wiki_codec8).substr(0, 40);
  const inspection r = inspect_hex(cut);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.frames.back()["error"], "truncated");
}

TEST(FrameInspector, ReportsAWrongUdpLength) {
  std::string wrong = codec8_udp;
  wrong.replace(0, 4, "015B");
  const inspection r = inspect_hex(wrong);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.frames[0]["error"], "length_mismatch");
  EXPECT_EQ(r.frames[0]["offset"], 0);
  EXPECT_EQ(r.frames[0]["declared_length"], 347);
}

TEST(FrameInspector, StopsAStreamAtAnOversizeLength) {
  inspect_options options;
  options.max_frame_size = 1024;
  const inspection r = inspect_hex("0000000000100000", options);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.frames[0]["error"], "length_too_large");
  EXPECT_EQ(r.frames[0]["offset"], 4);
}

}  // namespace
}  // namespace tgw::infra
