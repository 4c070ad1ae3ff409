#include "infra/cli/command_rows.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace tgw::infra {
namespace {

constexpr std::int64_t t0 = 1'700'000'000'000;  // 2023-11-14T22:13:20Z

std::string printed(const std::vector<commands::command_record>& rs) {
  std::ostringstream out;
  command_table(rs, t0 + 65'000).print(out);
  return out.str();
}

commands::command_record record(std::string status) {
  commands::command_record r;
  r.command_id = "0123456789abcdef0123456789abcdef";
  r.payload = "getinfo";
  r.publisher = "ops";
  r.status = std::move(status);
  r.published_ms = t0;
  return r;
}

TEST(CommandRows, OneLineEachWithTheTimeForPeople) {
  auto answered = record("responded");
  answered.response = "FW:1.2";
  const std::string out = printed({answered});
  EXPECT_NE(out.find("2023-11-14T22:13:20Z (1 min 5 s ago)  responded  \"getinfo\"  ops  FW:1.2"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find(std::to_string(t0)), std::string::npos) << out;
}

TEST(CommandRows, NoByteOfATextOrReplyReachesTheTerminalRaw) {
  auto odd = record("failed");
  odd.payload = "set\x1b[2J";
  odd.failure_reason = "timeout";
  odd.response = "half\r\n";
  auto bytes = record("responded");
  bytes.response_hex = "FF0D0A";
  const std::string out = printed({odd, bytes});
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_NE(out.find("\"set\\x1b[2J\""), std::string::npos) << out;
  EXPECT_NE(out.find("timeout (half\\x0d\\x0a)"), std::string::npos) << out;
  EXPECT_NE(out.find("\\xff\\x0d\\x0a"), std::string::npos) << out;
}

TEST(CommandRows, JsonKeepsRawValues) {
  auto r = record("queued");
  r.expires_at_s = 1700000300;
  const auto j = command_json(r);
  EXPECT_EQ(j["published_ms"], t0);
  EXPECT_EQ(j["resolved_ms"], nullptr);
  EXPECT_EQ(j["expires_at"], 1700000300);
  EXPECT_EQ(j["text"], "getinfo");
  EXPECT_EQ(j["response"], nullptr);
}

}  // namespace
}  // namespace tgw::infra
