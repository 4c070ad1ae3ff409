#include "codecs/avl_decode.hpp"

#include <gtest/gtest.h>

#include "tests/codecs/hex.hpp"

namespace tgw::codecs {
namespace {

TEST(AvlDecode, WikiCodec8FirstExample) {
  const auto frame = test::from_hex(
      "000000000000003608010000016B40D8EA30010000000000000000000000000000000105021503010101425E0F01"
      "F10000601A014E0000000000000000010000C7CF");
  avl_packet packet;
  const auto status = decode_avl_frame(frame, packet);
  ASSERT_EQ(status.code, errc::ok) << to_string(status.code) << " at " << status.offset;
  ASSERT_EQ(packet.records.size(), 1U);
  EXPECT_EQ(packet.records[0].timestamp_ms, 1560161086000U);
  EXPECT_EQ(packet.io.size(), 5U);
}

}  // namespace
}  // namespace tgw::codecs
