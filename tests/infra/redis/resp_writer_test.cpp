#include "infra/redis/resp_writer.hpp"

#include <gtest/gtest.h>

#include "infra/redis/connection.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::infra::redis {
namespace {

TEST(RespWriter, WritesArraysOfBulkStrings) {
  resp_writer w;
  w.begin(3);
  w.arg("SET");
  w.arg("k");
  w.arg(std::int64_t{-42});
  w.begin(1);
  w.arg("");
  EXPECT_EQ(w.bytes(), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n-42\r\n*1\r\n$0\r\n\r\n");
  EXPECT_EQ(w.commands(), 2U);
  w.clear();
  EXPECT_TRUE(w.bytes().empty());
  EXPECT_EQ(w.commands(), 0U);
}

TEST(RespWriter, AMiscountedCommandIsNotComplete) {
  resp_writer w;
  EXPECT_TRUE(w.complete());
  w.begin(2);
  w.arg("GET");
  EXPECT_FALSE(w.complete()) << "one argument short";
  w.arg("k");
  EXPECT_TRUE(w.complete());
  w.arg("extra");
  EXPECT_FALSE(w.complete()) << "one argument more than announced";
  w.clear();
  w.begin(2);
  w.arg("GET");
  w.begin(1);  // the first command was left short
  w.arg("PING");
  EXPECT_FALSE(w.complete());
}

TEST(RespWriter, BinaryArgumentsRoundTripThroughARealServer) {
  test::redis_server server;
  connection redis = server.connect();
  const std::string binary("a\r\n\0b$*", 7);
  resp_writer w;
  w.begin(3);
  w.arg("SET");
  w.arg("key");
  w.arg(binary);
  w.begin(2);
  w.arg("GET");
  w.arg("key");
  bool sent = false;
  const auto replies = redis.pipeline_encoded_to(0, w.bytes(), w.commands(), sent);
  ASSERT_EQ(replies.size(), 2U);
  EXPECT_EQ(replies[0].text, "OK");
  EXPECT_EQ(replies[1].text, binary);
}

TEST(RespWriter, AnUnreachableServerGivesOneIoErrorPerCommand) {
  std::uint16_t port = 0;
  {
    test::redis_server server;
    port = server.port();
  }  // stopped: nothing listens there now
  endpoint gone;
  gone.port = port;
  connection redis(
      {gone, std::chrono::milliseconds{500}, std::chrono::milliseconds{500}, "resp-test"});
  resp_writer w;
  w.begin(1);
  w.arg("PING");
  w.begin(1);
  w.arg("PING");
  bool sent = false;
  const auto replies = redis.pipeline_encoded_to(0, w.bytes(), w.commands(), sent);
  ASSERT_EQ(replies.size(), 2U);
  for (const auto& r : replies) {
    EXPECT_TRUE(r.is_error());
    EXPECT_EQ(r.failure, failure_kind::unreachable) << r.text;
  }
}

}  // namespace
}  // namespace tgw::infra::redis
