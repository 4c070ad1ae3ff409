#include "infra/commands/command_publisher.hpp"
#include "infra/commands/command_send.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "tests/infra/commands/command_test_fixture.hpp"

namespace tgw::infra::commands::test {
namespace {

constexpr const char* imei = "356307042441013";

class CommandPublisher : public CommandFixture {};

TEST_F(CommandPublisher, CommandIdsAreFreshHex) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = new_command_id();
    EXPECT_EQ(id.size(), 32U);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000U);
}

TEST_F(CommandPublisher, WaitResponseFindsItsOwnAmongOthers) {
  place(imei, "A");
  auto pub = publisher();
  const auto sent = pub.publish(imei, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(sent && sent->status == "sent") << error;
  std::thread device([&] {
    auto a = store("A");
    ports::store_failure e;
    redis::connection other = backend.connect();
    other.command(
        {"XADD", responses_of(imei), "*", "command_id", "someone-else", "status", "failed"});
    for (int i = 0; i < 20; ++i) {
      const auto got = a.read_new(100ms, 16, e);
      if (got && !got->empty()) {
        a.resolve(got->front(), {"responded", "hello", ""}, e);
        return;
      }
    }
  });
  const auto r = pub.wait_response(imei, sent->command_id, sent->last_response_id, 5s, error);
  device.join();
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->command_id, sent->command_id);
  EXPECT_EQ(r->status, "responded");
  EXPECT_EQ(r->response, "hello");
  EXPECT_GT(r->responded_at, 0);
}

TEST_F(CommandPublisher, AResponseAddedBeforeTheWaitIsNotMissed) {
  place(imei, "A");
  auto pub = publisher();
  const auto sent = pub.publish(imei, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(sent) << error;
  auto a = store("A");
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got && got->size() == 1) << failed.text();
  ASSERT_TRUE(a.resolve(got->front(), {"failed", "", "imei_mismatch"}, failed));
  const auto r = pub.wait_response(imei, sent->command_id, sent->last_response_id, 1s, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, "failed");
  EXPECT_EQ(r->failure_reason, "imei_mismatch");
}

TEST_F(CommandPublisher, WaitResponseTimesOutWithoutError) {
  auto pub = publisher();
  const auto start = std::chrono::steady_clock::now();
  const auto r = pub.wait_response(imei, "nobody", "0-0", 300ms, error);
  EXPECT_FALSE(r);
  EXPECT_EQ(error, "");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
}

TEST_F(CommandPublisher, WatchSeesOnlyNewResponses) {
  redis.command({"XADD", responses_of(imei), "*", "command_id", "old", "status", "failed"});
  auto pub = publisher();
  std::vector<std::string> seen;
  std::thread writer([&] {
    redis::connection w = backend.connect();
    // Responses to devices of different shards (on a cluster).
    const std::vector<std::string> devices = {imei, "356307042441001", "356307042441002"};
    for (std::size_t i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(150ms);  // after watch() took its starting id
      const std::string id = std::string("n").append(std::to_string(i + 1));
      w.command({"XADD", responses_of(devices[i]), "*", "command_id", id, "status", "responded"});
    }
  });
  const bool ok = pub.watch(
      [&](const command_response& r) {
        seen.push_back(r.command_id);
        return seen.size() < 3;
      },
      error);
  writer.join();
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(seen, (std::vector<std::string>{"n1", "n2", "n3"}));
}

// The whole send: published, answered by the instance that holds the device, and the
// outcome is that answer, with the replicas it asked for confirmed.
TEST_F(CommandPublisher, SendCommandReturnsTheDevicesAnswer) {
  if (backend.on_cluster()) GTEST_SKIP() << "WAIT 0 on a cluster: covered by the store tests";
  place(imei, "A");
  auto pub = publisher();
  std::thread device([&] {
    auto a = store("A");
    ports::store_failure e;
    for (int i = 0; i < 50; ++i) {
      const auto got = a.read_new(100ms, 16, e);
      if (got && !got->empty()) {
        a.resolve(got->front(), {"responded", "FW 1.2", ""}, e);
        return;
      }
    }
  });
  send_request request{imei, "getver"};
  request.timeout = 10s;
  const send_outcome out = send_command(pub, request);
  device.join();
  EXPECT_EQ(out.error, "");
  EXPECT_EQ(out.published.status, "sent");
  ASSERT_TRUE(out.response);
  EXPECT_EQ(out.response->status, "responded");
  EXPECT_EQ(out.response->response, "FW 1.2");
  EXPECT_FALSE(out.replicas_confirmed);
}

// Redis unreachable from start to timeout: the send cannot even end the command, and
// says that its outcome is unknown (exit 1 in tgw command send), never that it failed.
TEST_F(CommandPublisher, SendCommandWithRedisAwayThroughoutSaysTheOutcomeIsUnknown) {
  redis::endpoint nowhere;
  nowhere.port = tgw::test::free_port();
  command_publisher pub({nowhere, 200ms, 500ms, "test"}, 200ms);
  send_request request{imei, "getver"};
  request.timeout = 1s;
  const send_outcome out = send_command(pub, request);
  EXPECT_NE(out.error.find("outcome unknown"), std::string::npos) << out.error;
  EXPECT_FALSE(out.response);
  EXPECT_EQ(out.published.command_id.size(), 32U);
}

}  // namespace
}  // namespace tgw::infra::commands::test
