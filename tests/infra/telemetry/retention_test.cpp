// Trimming the telemetry stream by what its consumer groups acknowledged, against a
// real redis-server: an entry some group still needs is never trimmed.
#include "infra/telemetry/retention.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/support/redis_server.hpp"

namespace tgw::infra::telemetry {
namespace {

constexpr const char* stream = "telemetry:records";

class Retention : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 1; i <= 10; ++i)
      ids.push_back(redis.command({"XADD", stream, "*", "n", std::to_string(i)}).text);
  }
  void read(const std::string& group, int count) {
    redis.command({"XREADGROUP", "GROUP", group, "c1", "COUNT", std::to_string(count), "STREAMS",
                   stream, ">"});
  }
  void ack(const std::string& group, int n) {
    redis.command({"XACK", stream, group, ids.at(static_cast<std::size_t>(n - 1))});
  }
  std::vector<std::string> remaining() {
    std::vector<std::string> out;
    for (const auto& e : redis.command({"XRANGE", stream, "-", "+"}).elements)
      out.push_back(e.elements.at(1).elements.at(1).text);
    return out;
  }
  std::int64_t trim() {
    std::string error;
    const auto view = read_retention(redis, stream, error);
    EXPECT_TRUE(view.has_value()) << error;
    const auto removed = trim_acknowledged(redis, stream, *view, error);
    EXPECT_TRUE(removed.has_value()) << error;
    return removed.value_or(-1);
  }

  test::redis_server server;
  redis::connection redis = server.connect();
  std::vector<std::string> ids;
};

TEST_F(Retention, WithoutAGroupNothingIsTrimmed) {
  EXPECT_EQ(trim(), 0);
  EXPECT_EQ(remaining().size(), 10U);
}

TEST_F(Retention, TheViewGivesTheStreamsLengthAndSize) {
  std::string error;
  const auto view = read_retention(redis, stream, error);
  ASSERT_TRUE(view.has_value()) << error;
  EXPECT_EQ(view->length, 10);
  EXPECT_EQ(view->bytes, redis.command({"MEMORY", "USAGE", stream}).integer);
  EXPECT_GT(view->bytes, 0);
  const auto none = read_retention(redis, "no:such:stream", error);
  ASSERT_TRUE(none.has_value()) << error;
  EXPECT_EQ(none->bytes, 0);
}

TEST_F(Retention, OnlyWhatTheGroupAcknowledgedGoes) {
  redis.command({"XGROUP", "CREATE", stream, "sink", "0"});
  read("sink", 5);
  ack("sink", 1);
  ack("sink", 2);
  EXPECT_EQ(trim(), 2);
  EXPECT_EQ(remaining(), (std::vector<std::string>{"3", "4", "5", "6", "7", "8", "9", "10"}));
  // Acknowledged out of order: 4 is done, 3 is not; 3 and everything after stay.
  ack("sink", 4);
  EXPECT_EQ(trim(), 0);
  EXPECT_EQ(remaining().front(), "3");
}

TEST_F(Retention, TheSlowestOfSeveralGroupsDecides) {
  redis.command({"XGROUP", "CREATE", stream, "fast", "0"});
  redis.command({"XGROUP", "CREATE", stream, "slow", "0"});
  read("fast", 10);
  for (int i = 1; i <= 10; ++i) ack("fast", i);
  read("slow", 6);
  for (int i = 1; i <= 4; ++i) ack("slow", i);
  EXPECT_EQ(trim(), 4);
  EXPECT_EQ(remaining().front(), "5");
  std::string error;
  const auto view = read_retention(redis, stream, error);
  ASSERT_TRUE(view.has_value()) << error;
  ASSERT_EQ(view->groups.size(), 2U);
  EXPECT_EQ(view->groups[1].name, "slow");
  EXPECT_EQ(view->groups[1].pending, 2);
  EXPECT_EQ(view->groups[1].lag_entries, 4);
  EXPECT_EQ(view->groups[0].lag_entries, 0);
}

TEST_F(Retention, EverythingDeliveredAndAcknowledgedGoesButNothingUndelivered) {
  redis.command({"XGROUP", "CREATE", stream, "sink", "0"});
  read("sink", 7);
  for (int i = 1; i <= 7; ++i) ack("sink", i);
  EXPECT_EQ(trim(), 7);
  EXPECT_EQ(remaining(), (std::vector<std::string>{"8", "9", "10"}));
  // A group created at the end ($) wants nothing older: it does not hold entries back.
  redis.command({"XGROUP", "CREATE", stream, "late", "$"});
  EXPECT_EQ(trim(), 0);
  EXPECT_EQ(remaining().size(), 3U);
}

TEST_F(Retention, TheOldestNeededEntryIsAnEntryWithItsStoringTime) {
  const auto ms = [](const std::string& id) { return std::stoll(id.substr(0, id.find('-'))); };
  redis.command({"XGROUP", "CREATE", stream, "sink", "0"});
  std::string error;
  // Nothing delivered: the first entry of the stream.
  auto view = read_retention(redis, stream, error);
  ASSERT_TRUE(view.has_value()) << error;
  EXPECT_EQ(view->groups[0].oldest_needed_stored_ms, ms(ids[0]));
  // Delivered and acknowledged up to 7: the first undelivered, 8, not 7's id plus one.
  read("sink", 7);
  for (int i = 1; i <= 7; ++i) ack("sink", i);
  view = read_retention(redis, stream, error);
  EXPECT_EQ(view->groups[0].oldest_needed_stored_ms, ms(ids[7]));
  // 8 delivered, not acknowledged: 8.
  read("sink", 1);
  view = read_retention(redis, stream, error);
  EXPECT_EQ(view->groups[0].oldest_needed, ids[7]);
  EXPECT_EQ(view->groups[0].oldest_needed_stored_ms, ms(ids[7]));
  // Everything delivered and acknowledged: no entry needed, no age.
  read("sink", 10);
  for (int i = 8; i <= 10; ++i) ack("sink", i);
  view = read_retention(redis, stream, error);
  EXPECT_FALSE(view->groups[0].oldest_needed_stored_ms);
}

TEST_F(Retention, TheFloorTrimsTheOldestAndReadsRedisMemory) {
  std::string error;
  const auto removed = trim_to_length(redis, stream, 4, error);
  ASSERT_TRUE(removed) << error;
  EXPECT_EQ(*removed, 6);
  EXPECT_EQ(remaining(), (std::vector<std::string>{"7", "8", "9", "10"}));
  redis.command({"CONFIG", "SET", "maxmemory", "123456789"});
  const auto memory = read_memory(redis);
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->max, 123456789);
  EXPECT_GT(memory->used, 0);
}

TEST(RetentionIds, CompareByMillisecondsThenSequence) {
  EXPECT_TRUE(stream_id_less("9-5", "10-0"));
  EXPECT_TRUE(stream_id_less("10-2", "10-10"));
  EXPECT_FALSE(stream_id_less("10-10", "10-10"));
}

}  // namespace
}  // namespace tgw::infra::telemetry
