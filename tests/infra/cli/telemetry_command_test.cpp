// `tgw telemetry tail` against a real redis-server holding records in the gateway's
// stream format (docs/GATEWAY.md, "Redis keys").
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/telemetry_entries.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* imei_a = "356307042441013";
constexpr const char* imei_b = "356307042441021";

class TelemetryTail : public ::testing::Test {
 protected:
  std::string add(const char* imei, std::int64_t ts, const std::string& io) {
    return redis.command(test::telemetry_entry_xadd(imei, ts, io)).text;
  }
  std::string tail(const std::string& args) {
    return "telemetry tail --redis " + server.url() + " " + args;
  }
  static std::vector<nlohmann::json> lines(const std::string& out) {
    std::vector<nlohmann::json> parsed;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) parsed.push_back(nlohmann::json::parse(line));
    return parsed;
  }

  redis_server server;
  infra::redis::connection redis = server.connect();
};

TEST_F(TelemetryTail, FromTheStartOneDevicesRecordsInOrderAsJson) {
  const std::string first = add(imei_a, 1'700'000'000'000, R"({"239":1,"66":12345})");
  add(imei_b, 1'700'000'000'500, R"({"239":0})");
  add(imei_a, 1'700'000'001'000, R"({"78":"18446744073709551615","281":"DEAD01"})");
  const auto r = run_tgw(tail("--from start --imei " + std::string(imei_a) + " --count 2 --json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto records = lines(r.out);
  ASSERT_EQ(records.size(), 2U) << r.out;
  EXPECT_EQ(records[0]["id"], first);
  EXPECT_EQ(records[0]["imei"], imei_a);
  EXPECT_EQ(records[0]["ts"], "1700000000000");
  EXPECT_EQ(records[0]["time"], "2023-11-14T22:13:20.000Z");
  EXPECT_DOUBLE_EQ(records[0]["lat"].get<double>(), 54.6992512);
  EXPECT_DOUBLE_EQ(records[0]["lon"].get<double>(), 25.2616688);
  EXPECT_EQ(records[0]["spd"], 41);
  // A format 2 entry's io reads in the format 3 form: [id, value] pairs in order.
  EXPECT_EQ(records[0]["io"], nlohmann::json::parse(R"([[239,"1"],[66,"12345"]])"));
  EXPECT_EQ(records[0]["v"], "2");
  EXPECT_EQ(records[0]["codec"], "8E");
  EXPECT_EQ(records[1]["ts"], "1700000001000");
  // A value above 2^53 stays exact, the NX value is bytes.
  EXPECT_EQ(records[1]["io"],
            nlohmann::json::parse(R"([[78,"18446744073709551615"],[281,{"hex":"DEAD01"}]])"));
}

TEST_F(TelemetryTail, NamesTheIoElementsForAPerson) {
  add(imei_a, 1'700'000'000'000, R"({"239":1,"66":12345,"182":12,"9999":7})");
  const auto r = run_tgw(tail("--from start --count 1 --names"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out,
            "2023-11-14T22:13:20.000Z 356307042441013 lat 54.6992512 lon 25.2616688 alt 105 m "
            "speed 41 km/h angle 90 sats 12 event 239 io {ignition=1, external_voltage=12.345 V, "
            "gnss_hdop=1.2, 9999=7}\n");
}

TEST_F(TelemetryTail, FromNowOnlyRecordsStoredAfterItStarted) {
  add(imei_a, 1'700'000'000'000, R"({"239":1})");
  auto follower = std::async(std::launch::async, [&] { return run_tgw(tail("--count 1 --json")); });
  // The tail starts at some moment; records keep arriving until it has printed one.
  std::int64_t ts = 1'700'000'100'000;
  while (follower.wait_for(100ms) != std::future_status::ready && ts < 1'700'000'200'000) {
    add(imei_b, ts, R"({"239":0})");
    ts += 1000;
  }
  const auto r = follower.get();
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto records = lines(r.out);
  ASSERT_EQ(records.size(), 1U) << r.out;
  EXPECT_EQ(records[0]["imei"], imei_b);
}

TEST_F(TelemetryTail, AnEntryWhoseIoDoesNotParseIsShownAsIs) {
  add(imei_a, 1'700'000'000'000, "not json");
  const auto r = run_tgw(tail("--from start --count 1 --json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto record = lines(r.out).at(0);
  EXPECT_FALSE(record.contains("io"));
  EXPECT_EQ(record["io_text"], "not json");
  EXPECT_EQ(record["io_error"], "io is not a JSON object");
}

TEST_F(TelemetryTail, BadFlagsAndAnUnreachableRedisAreClearErrors) {
  auto r = run_tgw(tail("--imei 12345 --count 1"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("not an IMEI"), std::string::npos) << r.out;
  r = run_tgw(tail("--from yesterday --count 1"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--from 'yesterday'"), std::string::npos) << r.out;
  r = run_tgw(std::string("telemetry tail --redis ") + (over_tls ? "rediss" : "redis") +
              "://127.0.0.1:" + std::to_string(free_port()) + " --count 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("Connection refused"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tgw::test
