#include "infra/commands/command_history.hpp"

#include <gtest/gtest.h>

#include <map>

#include "infra/redis/stream_pages.hpp"
#include "tests/infra/commands/command_test_fixture.hpp"

namespace tgw::infra::commands::test {
namespace {

constexpr const char* imei1 = "356307042441013";
constexpr const char* imei2 = "356307042441014";

class CommandHistory : public CommandFixture {
 protected:
  std::vector<command_record> history(std::int64_t since_ms = 0) {
    auto r = read_command_history(redis, shards(), imei1, since_ms, error);
    EXPECT_TRUE(r) << error;
    return r.value_or(std::vector<command_record>{});
  }
  std::string publish(command_publisher& pub, const char* text, bool queue = false) {
    const auto r = pub.publish(imei1, text, 12, 300s, queue, error);
    EXPECT_TRUE(r) << error;
    return r ? r->command_id : std::string();
  }
  /// Reads A's new entries and journals each as handed to the device.
  std::vector<command_entry> hand_over(redis_command_store& a) {
    auto got = a.read_new(100ms, 16, failed);
    EXPECT_TRUE(got) << failed.text();
    for (const auto& e : got.value_or(std::vector<command_entry>{}))
      EXPECT_TRUE(a.dispatched(e, failed)) << failed.text();
    return got.value_or(std::vector<command_entry>{});
  }
  static std::vector<std::string> ids_of(const std::vector<command_record>& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs) out.push_back(r.command_id);
    return out;
  }
};

TEST_F(CommandHistory, EveryStageOfACommandIsSeenOnceInPublishingOrder) {
  place(imei1, "A");
  place(imei2, "A");
  auto a = store("A");
  auto pub = publisher();
  pub.identify_as("ops@desk");

  const std::string responded = publish(pub, "getinfo");
  auto handed = hand_over(a);
  ASSERT_EQ(handed.size(), 1U);
  ASSERT_TRUE(a.resolve(handed[0], {"responded", "FW:1.2", ""}, failed)) << failed.text();
  const std::string dispatched = publish(pub, "getver");
  ASSERT_EQ(hand_over(a).size(), 1U);
  const std::string sent = publish(pub, "getio");
  // Another device's command and answer stay out of this one's history.
  const auto other = pub.publish(imei2, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(other) << error;
  redis.command({"HDEL", registry::keys::registry_in(prefix(imei1)), imei1});
  const std::string queued = publish(pub, "getgps", true);

  const auto all = history();
  ASSERT_EQ(ids_of(all), (std::vector<std::string>{responded, dispatched, sent, queued}));
  EXPECT_EQ(all[0].status, "responded");
  EXPECT_EQ(all[0].response, "FW:1.2");
  EXPECT_EQ(all[1].status, "dispatched");
  EXPECT_EQ(all[2].status, "sent");
  EXPECT_EQ(all[3].status, "queued");
  const std::vector<std::string> texts = {"getinfo", "getver", "getio", "getgps"};
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].payload, texts[i]);
    EXPECT_EQ(all[i].publisher, "ops@desk");
    EXPECT_EQ(all[i].codec, "12");
    EXPECT_GT(all[i].published_ms, 0);
    EXPECT_GT(all[i].expires_at_s, 0);
  }
  EXPECT_EQ(all[0].instance, "A");
  EXPECT_EQ(all[2].instance, "A");
  EXPECT_GT(all[0].dispatched_ms, 0);
  EXPECT_GE(all[0].resolved_ms, all[0].dispatched_ms);
  EXPECT_EQ(all[2].dispatched_ms, 0);

  // The open ones alone, without reading the responses.
  const auto open = read_open_commands(redis, shards(), imei1, error);
  ASSERT_TRUE(open) << error;
  EXPECT_EQ(ids_of(*open), (std::vector<std::string>{dispatched, sent, queued}));

  // Since a time after them all: closed commands go, open ones stay.
  const auto later = history(all.back().published_ms + 1);
  EXPECT_EQ(ids_of(later), (std::vector<std::string>{dispatched, sent, queued}));
}

// A command refused at once (the device is not connected, no queueing) is in the
// history too, failed with the reason `tgw command send` reported.
TEST_F(CommandHistory, ACommandRefusedAtOnceIsListedAsFailed) {
  auto pub = publisher();
  pub.identify_as("ops@desk");
  const auto refused = pub.publish(imei1, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(refused) << error;
  ASSERT_EQ(refused->status, "offline");
  const auto all = history();
  ASSERT_EQ(ids_of(all), std::vector<std::string>{refused->command_id});
  EXPECT_EQ(all[0].status, "failed");
  EXPECT_EQ(all[0].failure_reason, "socket_closed");
  EXPECT_EQ(all[0].payload, "getinfo");
  EXPECT_EQ(all[0].publisher, "ops@desk");
  EXPECT_GT(all[0].published_ms, 0);
  EXPECT_GT(all[0].resolved_ms, 0);
  EXPECT_FALSE(all[0].open());
  // Nothing else is written for it: no response for watchers, no marker.
  EXPECT_EQ(redis.command({"XLEN", keys::responses_in(prefix(imei1))}).integer, 0);
  EXPECT_EQ(redis.command({"EXISTS", keys::marker(refused->command_id, prefix(imei1))}).integer, 0);
}

TEST_F(CommandHistory, WhatIsLeftWhenTheKeptRecordsAreGone) {
  place(imei1, "A");
  auto a = store("A");
  auto pub = publisher();
  // Answered; then its journal is trimmed: the response alone tells of it.
  const std::string trimmed = publish(pub, "getinfo");
  auto handed = hand_over(a);
  ASSERT_EQ(handed.size(), 1U);
  ASSERT_TRUE(a.resolve(handed[0], {"failed", "", "timeout"}, failed)) << failed.text();
  redis.command({"DEL", journal(imei1)});
  // Answered; then its response is trimmed and its resolve event too: its marker says.
  const std::string answered = publish(pub, "getver");
  handed = hand_over(a);
  ASSERT_EQ(handed.size(), 1U);
  ASSERT_TRUE(a.resolve(handed[0], {"responded", "v1", ""}, failed)) << failed.text();
  for (const auto& key : {responses_of(imei1), journal(imei1)})
    for (const auto& e : redis::stream_entries(redis.command({"XRANGE", key, "-", "+"})))
      if (e.get("command_id") == answered &&
          (e.get("type").empty() || e.get("type") == "command_resolved"))
        redis.command({"XDEL", key, e.id});
  // Published, then lost from its stream with its marker gone: nothing says.
  const std::string lost = publish(pub, "getio");
  redis.command({"DEL", outbound("A", imei1)});
  redis.command({"DEL", keys::marker(lost, prefix(imei1))});

  // Each once; by id, as they may share a millisecond, and then nothing kept orders a
  // command whose journal events are gone.
  const auto all = history();
  ASSERT_EQ(all.size(), 3U);
  std::map<std::string, command_record> by_id;
  for (const auto& r : all) by_id[r.command_id] = r;
  ASSERT_EQ(by_id.size(), 3U);
  const command_record& t = by_id[trimmed];
  EXPECT_EQ(t.status, "failed");
  EXPECT_EQ(t.failure_reason, "timeout");
  EXPECT_EQ(t.payload, "");
  EXPECT_EQ(t.published_ms, 0);
  EXPECT_GT(t.resolved_ms, 0);
  EXPECT_EQ(by_id[answered].status, "answered");
  EXPECT_EQ(by_id[answered].payload, "getver");
  EXPECT_EQ(by_id[lost].status, "unknown");
  EXPECT_EQ(by_id[lost].payload, "getio");
}

// A reply kept as bytes (response_hex, beside a response that holds only text) is read
// with the rest of the response.
TEST_F(CommandHistory, AReplyKeptAsBytesIsRead) {
  redis.command({"XADD", responses_of(imei1), "*", "command_id", "c-bytes", "status", "responded",
                 "responded_at", "1700000000000", "imei", imei1, "response_hex", "FF0D0A"});
  const auto all = history();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].response, "");
  EXPECT_EQ(all[0].response_hex, "FF0D0A");
  EXPECT_EQ(all[0].resolved_ms, 1700000000000);
}

}  // namespace
}  // namespace tgw::infra::commands::test
