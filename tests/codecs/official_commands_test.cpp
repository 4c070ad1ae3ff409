// The commands the server sends, built from their fields, byte for byte as the
// documents give them (tests/data/teltonika_official.json).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codecs/command.hpp"
#include "codecs/imei.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs {
namespace {

using bytes = std::vector<std::uint8_t>;

bytes encode(const command_fields& fields) {
  bytes out;
  EXPECT_EQ(encode_command_frame(fields, out), errc::ok);
  return out;
}

TEST(OfficialCommands, Codec12Getinfo) {
  command_fields f;
  f.codec = codec_id::codec12;
  f.type = message_type::command;
  f.payload = as_bytes("getinfo");
  EXPECT_EQ(test::to_hex(encode(f)), test::to_hex(test::official_bytes("codec12_getinfo_command")));
}

TEST(OfficialCommands, Codec12Getio) {
  command_fields f;
  f.codec = codec_id::codec12;
  f.type = message_type::command;
  f.payload = as_bytes("getio");
  EXPECT_EQ(test::to_hex(encode(f)), test::to_hex(test::official_bytes("codec12_getio_command")));
}

TEST(OfficialCommands, Codec14Getver) {
  command_fields f;
  f.codec = codec_id::codec14;
  f.type = message_type::command;
  ASSERT_EQ(imei::parse("352093081452251", f.device), errc::ok);
  f.payload = as_bytes("getver");
  EXPECT_EQ(test::to_hex(encode(f)), test::to_hex(test::official_bytes("codec14_getver_command")));
}

}  // namespace
}  // namespace tgw::codecs
