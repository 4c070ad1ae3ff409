#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/infra/commands/command_test_fixture.hpp"
#include "tests/support/run_tgw.hpp"

namespace tgw::infra::commands::test {
namespace {

using tgw::test::run_tgw;

constexpr const char* imei = "356307042441013";

class CommandCommand : public CommandFixture {
 protected:
  std::string redis_flag() const {
    return " --redis redis://127.0.0.1:" + std::to_string(backend.server()->port()) + "/0";
  }
  std::string send(const std::string& extra) {
    return std::string("command send --imei ") + imei + " --text getinfo" + redis_flag() + " " +
           extra;
  }

  /// Plays the instance holding the device: answers each command it reads with
  /// `outcome` until stopped.
  void start_device(resolution outcome) {
    place(imei, "A");
    device_ = std::thread([this, outcome] {
      auto a = store("A");
      ports::store_failure e;
      while (!stop_) {
        const auto got = a.read_new(100ms, 16, e);
        if (!got) continue;
        for (const command_entry& c : *got) {
          resolution r = outcome;
          if (r.status == "responded") r.response += " to " + c.payload;
          a.resolve(c, r, e);
        }
      }
    });
  }
  void TearDown() override {
    stop_ = true;
    if (device_.joinable()) device_.join();
  }

  std::thread device_;
  std::atomic<bool> stop_{false};
};

TEST_F(CommandCommand, UsageErrorsExitTwo) {
  EXPECT_EQ(run_tgw("command send --imei 12345 --text getinfo").exit_code, 2);
  EXPECT_EQ(run_tgw(send("--codec 13")).exit_code, 2);
  EXPECT_EQ(run_tgw(send("--timeout 5x")).exit_code, 2);
  EXPECT_EQ(run_tgw(send("--ttl -1s")).exit_code, 2);
  EXPECT_EQ(run_tgw(std::string("command send --imei ") + imei).exit_code, 2);  // no --text
  EXPECT_EQ(run_tgw(send("--redis http://x")).exit_code, 2);
  EXPECT_EQ(run_tgw("command").exit_code, 2);
}

TEST_F(CommandCommand, RedisUnreachableExitsOne) {
  const auto r = run_tgw(
      std::string("command send --imei ") + imei +
      " --text getinfo --redis redis://127.0.0.1:" + std::to_string(tgw::test::free_port()) + "/0");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("Connection refused (nothing listens there): Redis is unreachable"),
            std::string::npos)
      << r.out;
}

TEST_F(CommandCommand, OfflineDeviceExitsOneWithTheReason) {
  const auto r = run_tgw(send(""));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out, std::string("failed: socket_closed (device ") + imei + " is not connected)\n");
}

TEST_F(CommandCommand, QueuedExitsThree) {
  const auto r = run_tgw(send("--queue-if-offline"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(r.out, "queued: device offline; delivered on next connect\n");
  EXPECT_EQ(redis.command({"LLEN", keys::offline(imei)}).integer, 1);
}

TEST_F(CommandCommand, RespondedExitsZeroAndPrintsTheText) {
  start_device({"responded", "FW:1.0", ""});
  const auto r = run_tgw(send("--timeout 10s"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "responded: FW:1.0 to getinfo\n");
}

TEST_F(CommandCommand, JsonCarriesTheWholeOutcome) {
  start_device({"responded", "FW:1.0", ""});
  const auto r = run_tgw(send("--timeout 10s --json --codec 14"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("command_id").get<std::string>().size(), 32U);
  EXPECT_EQ(j.at("imei"), imei);
  EXPECT_EQ(j.at("status"), "responded");
  EXPECT_EQ(j.at("response"), "FW:1.0 to getinfo");
  EXPECT_TRUE(j.at("failure_reason").is_null());
  EXPECT_GT(j.at("responded_at").get<std::int64_t>(), 0);
  EXPECT_EQ(j.at("owner"), "A");
  EXPECT_GE(j.at("round_trip_ms").get<double>(), 0.0);
}

TEST_F(CommandCommand, FailedExitsOne) {
  start_device({"failed", "", "imei_mismatch"});
  const auto r = run_tgw(send("--timeout 10s"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out, "failed: imei_mismatch\n");
}

TEST_F(CommandCommand, NoResponseInTimeExitsOne) {
  place(imei, "A");  // alive, but nobody reads its stream
  const auto r = run_tgw(send("--timeout 300ms --json"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("status"), "timeout");
  EXPECT_EQ(j.at("failure_reason"), "no response within 300ms");
  const auto text = run_tgw(send("--timeout 1"));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_EQ(text.out, "timeout: no response within 1s\n");
}

TEST_F(CommandCommand, SettingsComeFromTheEnvironment) {
  place(imei, "A");
  const std::string env =
      "TGW_REDIS=redis://127.0.0.1:" + std::to_string(backend.server()->port()) +
      "/0 TGW_COMMAND_TIMEOUT=200ms TGW_COMMAND_CODEC=14 ";
  const auto out = tgw::test::run_command(env + TGW_BINARY + " command send --imei " + imei +
                                          " --text getinfo --json");
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_NE(out.out.find("no response within 200ms"), std::string::npos) << out.out;
  const auto entry = entries(keys::outbound("A"));
  ASSERT_FALSE(entry.empty());
  EXPECT_EQ(entry.back().at("codec"), "14");
}

}  // namespace
}  // namespace tgw::infra::commands::test
