#include "codecs/codec_id.hpp"

#include <gtest/gtest.h>

#include "tests/codecs/printers.hpp"

namespace tgw::codecs {
namespace {

TEST(CodecId, FamiliesPartitionTheKnownIds) {
  for (int id = 0; id < 256; ++id) {
    const auto byte = static_cast<std::uint8_t>(id);
    const bool avl = id == 0x08 || id == 0x8E || id == 0x10;
    const bool command = id >= 0x0C && id <= 0x0F;
    EXPECT_EQ(is_avl_codec(byte), avl) << id;
    EXPECT_EQ(is_command_codec(byte), command) << id;
    EXPECT_EQ(codec_name(byte) != "unknown", avl || command) << id;
  }
}

TEST(CodecId, Names) {
  EXPECT_EQ(codec_name(0x08), "8");
  EXPECT_EQ(codec_name(0x8E), "8E");
  EXPECT_EQ(codec_name(0x10), "16");
  EXPECT_EQ(codec_name(0x0C), "12");
  EXPECT_EQ(codec_name(0x0D), "13");
  EXPECT_EQ(codec_name(0x0E), "14");
  EXPECT_EQ(codec_name(0x0F), "15");
  EXPECT_EQ(static_cast<std::uint8_t>(codec_id::codec8e), 0x8E);
}

}  // namespace
}  // namespace tgw::codecs
