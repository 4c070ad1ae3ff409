// The reply rules of one device's outbound commands, without an actor: which frames
// answer the command in flight, and how.
#include "actors/commands/device_commands.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "codecs/command.hpp"

namespace tgw::actors::commands {
namespace {

using bytes = std::vector<std::uint8_t>;

// Built by designated initializers: GCC 12 at -O3 takes assignments to a fresh entry's
// strings, once inlined into a caller, for an overflow (-Wstringop-overflow).
command_entry entry(std::string imei, int codec) {
  return command_entry{.entry_id = "1-0",
                       .command_id = "c",
                       .target_imei = std::move(imei),
                       .payload = "getver",
                       .codec = codec,
                       .expires_at = 0,
                       .malformed = "",
                       .control_characters = false,
                       .shard = 0};
}

bytes codec14_ack(const std::string& imei, const std::string& text) {
  codecs::command_fields f;
  f.codec = codecs::codec_id::codec14;
  f.type = codecs::message_type::response;
  EXPECT_EQ(codecs::imei::parse(imei, f.device), codecs::errc::ok);
  f.payload = codecs::as_bytes(text);
  bytes out;
  EXPECT_EQ(codecs::encode_command_frame(f, out), codecs::errc::ok);
  return out;
}

std::optional<resolved_command> answer(const std::string& target, const bytes& reply) {
  device_commands commands(4);
  EXPECT_FALSE(commands.enqueue(entry(target, 14)));
  std::vector<resolved_command> failed;
  EXPECT_TRUE(commands.next(0, 0, failed));
  return commands.on_reply(reply);
}

// A 16-digit IMEI that starts with 0 fills the 8 BCD bytes, and reads back from them as
// its last 15 digits: the device's ACK names the same IMEI, byte for byte.
TEST(DeviceCommands, ACodec14AckIsComparedAsTheBcdOnTheWire) {
  const auto same = answer("0356307042441013", codec14_ack("0356307042441013", "Ver:1"));
  ASSERT_TRUE(same);
  EXPECT_EQ(same->outcome.status, "responded");
  EXPECT_EQ(same->outcome.response, "Ver:1");

  const auto sixteen = answer("3563070424410134", codec14_ack("3563070424410134", "Ver:1"));
  ASSERT_TRUE(sixteen);
  EXPECT_EQ(sixteen->outcome.status, "responded");

  const auto other = answer("3563070424410134", codec14_ack("356307042441013", "Ver:1"));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->outcome.status, "failed");
  EXPECT_EQ(other->outcome.failure_reason, "imei_mismatch");
}

}  // namespace
}  // namespace tgw::actors::commands
