// `tgw command history` against a real gateway: a device that answers one command,
// lets one time out, drops its connection with one in flight, and has one queued while
// it is away; the history lists each once, in the order they were published. On a real
// redis-server, and in actors_cluster_test on the 3+3 Redis Cluster of redis_backend.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "infra/commands/command_publisher.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/gateway_process.hpp"
#include "tests/support/run_tgw.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr const char* imei = "356307042441013";

/// The line of `text` that holds `part`.
std::string line_with(const std::string& text, const std::string& part) {
  const auto at = text.find(part);
  if (at == std::string::npos) return {};
  const auto begin = text.rfind('\n', at);
  const auto end = text.find('\n', at);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end == std::string::npos ? std::string::npos
                                              : end - (begin == std::string::npos ? 0 : begin + 1));
}

class CommandHistory : public ::testing::Test {
 protected:
  /// The response to a command published with `p`, waiting up to 20 s.
  std::optional<infra::commands::command_response> outcome(
      const infra::commands::publish_result& p) {
    std::string error;
    auto r = publisher.wait_response(imei, p.command_id, p.last_response_id, 20s, error);
    EXPECT_TRUE(error.empty()) << error;
    return r;
  }
  infra::commands::publish_result publish(const std::string& text, bool queue = false) {
    std::string error;
    const auto r = publisher.publish(imei, text, 12, 300s, queue, error);
    EXPECT_TRUE(r) << error;
    return r.value_or(infra::commands::publish_result{});
  }
  bool registered() {
    return !redis.command({"HGET", backend.prefix(imei) + "connections:registry", imei}).is_nil();
  }

  redis_backend backend;
  infra::redis::connection redis = backend.connect();
  infra::commands::command_publisher publisher{
      {backend.endpoint(), 1000ms, 3000ms, "history-test"}, 1000ms, backend.shards()};
};

TEST_F(CommandHistory, AnsweredTimedOutFailedAndQueuedEachOnceInOrder) {
  const std::uint16_t metrics_port = free_port();
  const gateway_process gw = start_gateway(backend, "gw-history",
                                           {"--command-timeout-ms", "1000", "--metrics-addr",
                                            "127.0.0.1:" + std::to_string(metrics_port)});
  ASSERT_NE(gw.port, 0);
  publisher.identify_as("alice@ops");
  std::vector<std::string> ids;
  infra::commands::publish_result dropped;
  {
    device d(gw.port);
    d.send(handshake_packet(imei));
    ASSERT_EQ(d.receive(1), bytes{0x01});
    ASSERT_TRUE(eventually([&] { return registered(); }));

    const auto answered = publish("getinfo");
    ASSERT_EQ(answered.status, "sent");
    ASSERT_EQ(receive_command(d), "getinfo");
    ASSERT_TRUE(answer_command(d, "FW:03.27.14"));
    ASSERT_EQ(outcome(answered).value_or(infra::commands::command_response{}).status, "responded");

    const auto timed_out = publish("getver");
    ASSERT_EQ(receive_command(d), "getver");
    const auto late = outcome(timed_out);
    ASSERT_TRUE(late);
    ASSERT_EQ(late->failure_reason, "timeout");

    dropped = publish("setdigout 1");
    ASSERT_EQ(receive_command(d), "setdigout 1");
    ids = {answered.command_id, timed_out.command_id, dropped.command_id};
  }  // the device goes away with "setdigout 1" in flight
  const auto closed = outcome(dropped);
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->failure_reason, "socket_closed");
  ASSERT_TRUE(eventually([&] { return !registered(); }));
  const auto queued = publish("getgps", true);
  ASSERT_EQ(queued.status, "queued");
  ids.push_back(queued.command_id);

  const run_result r =
      run_tgw("command history --json --imei " + std::string(imei) + " --redis " + backend.url());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  const json& list = j["commands"];
  ASSERT_EQ(list.size(), 4U) << r.out;
  const std::vector<std::vector<std::string>> expected = {
      {"getinfo", "responded", "FW:03.27.14", ""},
      {"getver", "failed", "", "timeout"},
      {"setdigout 1", "failed", "", "socket_closed"},
      {"getgps", "queued", "", ""}};
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(expected[i][0]);
    const json& c = list[i];
    EXPECT_EQ(c["command_id"], ids[i]);
    EXPECT_EQ(c["text"], expected[i][0]);
    EXPECT_EQ(c["status"], expected[i][1]);
    EXPECT_EQ(c["response"], expected[i][2].empty() ? json(nullptr) : json(expected[i][2]));
    EXPECT_EQ(c["failure_reason"], expected[i][3].empty() ? json(nullptr) : json(expected[i][3]));
    EXPECT_EQ(c["publisher"], "alice@ops");
    EXPECT_EQ(c["codec"], "12");
    ASSERT_TRUE(c["published_ms"].is_number());
    EXPECT_GE(c["published_ms"].get<std::int64_t>(), previous);
    previous = c["published_ms"].get<std::int64_t>();
    if (i < 3) {
      EXPECT_EQ(c["instance"], "gw-history");
      EXPECT_GE(c["resolved_ms"].get<std::int64_t>(), c["published_ms"].get<std::int64_t>());
    }
  }

  // For people: each command on one line, once, with a human time and no raw one.
  const run_result text =
      run_tgw("command history --imei " + std::string(imei) + " --redis " + backend.url());
  ASSERT_EQ(text.exit_code, 0) << text.out;
  for (const std::string& id : ids) {
    const auto at = text.out.find(id);
    ASSERT_NE(at, std::string::npos) << text.out;
    EXPECT_EQ(text.out.find(id, at + 1), std::string::npos) << "listed twice: " << text.out;
  }
  EXPECT_NE(text.out.find("4 commands for " + std::string(imei)), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Z ("), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(std::to_string(previous)), std::string::npos) << text.out;
  const std::string getver = line_with(text.out, ids[1]);
  for (const char* part : {"  failed  ", "  \"getver\"  ", "  alice@ops  ", "  timeout  "})
    EXPECT_NE(getver.find(part), std::string::npos) << part << " in: " << getver;

  // The instance counted each outcome it answered (the queued one has none yet).
  const std::string metrics = http_get(metrics_port, "/metrics");
  for (const char* outcome : {"responded", "timeout", "socket_closed"})
    EXPECT_NE(
        metrics.find("teltonika_command_outcomes_total{instance_id=\"gw-history\",outcome=\"" +
                     std::string(outcome) + "\"} 1\n"),
        std::string::npos)
        << outcome << "\n"
        << metrics;

  // --since later than all of them leaves the queued one only: it is still open.
  const run_result later = run_tgw("command history --json --since 2099-01-01 --imei " +
                                   std::string(imei) + " --redis " + backend.url());
  const json open = json::parse(later.out, nullptr, false);
  ASSERT_TRUE(open.is_object()) << later.out;
  ASSERT_EQ(open["commands"].size(), 1U) << later.out;
  EXPECT_EQ(open["commands"][0]["command_id"], ids[3]);
}

TEST_F(CommandHistory, BadFlagsAreUsageErrors) {
  for (const char* args : {"", "--imei 123", "--imei 356307042441013 --since yesterday",
                           "--imei 356307042441013 --since 2026-13-01"}) {
    const run_result r =
        run_tgw(std::string("command history ") + args + " --redis " + backend.url());
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
  }
}

}  // namespace
}  // namespace tgw::test
