// Telemetry retention by consumer progress with a real `tgw serve` and redis-server:
// the gateway trims only what every consumer group acknowledged, and when Redis runs
// out of memory it stops ACKing until a consumer catches up and the trim frees room.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* imei = "356307042441013";
constexpr const char* stream = "telemetry:records";

bytes ack(std::uint32_t n) {
  return {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
          static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class TelemetryRetention : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& extra = {}) {
    port = free_port();
    metrics_port = free_port();
    log = ::testing::TempDir() + "/retention-gateway.log";
    std::remove(log.c_str());
    std::vector<std::string> argv = {TGW_BINARY,
                                     "serve",
                                     "--port",
                                     std::to_string(port),
                                     "--bind",
                                     "127.0.0.1",
                                     "--redis",
                                     "redis://127.0.0.1:" + std::to_string(server.port()),
                                     "--metrics-addr",
                                     "127.0.0.1:" + std::to_string(metrics_port),
                                     "--instance-id",
                                     "gw-retention",
                                     "--telemetry-retention-interval-ms",
                                     "200"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    gateway.emplace(argv, log);
    ASSERT_TRUE(eventually([&] {
      return http_get(metrics_port, "/readyz").starts_with("HTTP/1.1 200");
    })) << read_file(log);
  }
  // Reads up to `count` new entries for the group; returns their ids.
  std::vector<std::string> consume(int count) {
    std::vector<std::string> ids;
    const auto r = redis.command({"XREADGROUP", "GROUP", "sink", "c1", "COUNT",
                                  std::to_string(count), "STREAMS", stream, ">"});
    if (r.elements.empty()) return ids;
    for (const auto& e : r.elements.at(0).elements.at(1).elements)
      ids.push_back(e.elements.at(0).text);
    return ids;
  }
  std::set<std::string> stored() {
    std::set<std::string> ids;
    for (const auto& e : redis.command({"XRANGE", stream, "-", "+"}).elements)
      ids.insert(e.elements.at(0).text);
    return ids;
  }
  double metric(const std::string& series) {
    const std::string text = http_get(metrics_port, "/metrics");
    const auto at = text.find("\n" + series);
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + 1 + series.size()));
  }

  redis_server server;
  infra::redis::connection redis = server.connect();
  std::uint16_t port = 0;
  std::uint16_t metrics_port = 0;
  std::string log;
  std::optional<child_process> gateway;
};

// Redis with `bytes` of room left (below 0: that far past its limit): maxmemory that much
// above what it holds now, and no eviction, so that writes are refused once it is used up.
void leave_room(infra::redis::connection& redis, long bytes) {
  const auto info = redis.command({"INFO", "memory"}).text;
  const auto at = info.find("used_memory:");
  const long used = std::atol(info.c_str() + at + 12);
  redis.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  redis.command({"CONFIG", "SET", "maxmemory", std::to_string(used + bytes)});
}

// Sends packets of 25 records until one is not ACKed within the receive timeout (Redis
// refused it); returns that packet, or nothing if every one was ACKed.
bytes send_until_refused(device& d) {
  std::uint64_t t = 1'700'000'000'000;
  for (int i = 0; i < 2000; ++i, t += 100'000) {
    const bytes p = codec8e_packet(25, t);
    d.send(p);
    if (d.receive(4) != ack(25)) return p;
  }
  return {};
}

TEST_F(TelemetryRetention, OnlyEntriesEveryGroupAcknowledgedAreTrimmed) {
  redis.command({"XGROUP", "CREATE", stream, "sink", "0", "MKSTREAM"});
  start();
  device d(port);
  d.send(handshake_packet(imei));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  for (int i = 0; i < 5; ++i) {
    d.send(codec8e_packet(2, 1'700'000'000'000 + static_cast<std::uint64_t>(i) * 10'000));
    ASSERT_EQ(d.receive(4), ack(2));
  }
  const auto ids = consume(10);
  ASSERT_EQ(ids.size(), 10U);
  for (int i = 0; i < 6; ++i)
    redis.command({"XACK", stream, "sink", ids[static_cast<std::size_t>(i)]});
  // The four delivered and not acknowledged stay, whatever the gateway trims.
  const std::set<std::string> unacked(ids.begin() + 6, ids.end());
  ASSERT_TRUE(eventually([&] { return stored() == unacked; })) << stored().size();
  EXPECT_TRUE(eventually([&] {
    return metric(
               "teltonika_telemetry_consumer_pending_entries{instance_id=\"gw-retention\","
               "group=\"sink\"} ") == 4;
  })) << http_get(metrics_port, "/metrics");
  // A second group, created at the start, holds everything it has not read yet.
  redis.command({"XGROUP", "CREATE", stream, "audit", "0"});
  d.send(codec8e_packet(1, 1'700'000'100'000));
  ASSERT_EQ(d.receive(4), ack(1));
  for (const auto& id : ids) redis.command({"XACK", stream, "sink", id});
  for (const auto& id : consume(10)) redis.command({"XACK", stream, "sink", id});
  std::this_thread::sleep_for(600ms);  // three retention passes
  EXPECT_EQ(stored().size(), 5U);      // audit read nothing: 4 old entries and the new one
}

TEST_F(TelemetryRetention, OutOfMemoryStopsTheAcksUntilTheConsumerCatchesUp) {
  redis.command({"XGROUP", "CREATE", stream, "sink", "0", "MKSTREAM"});
  start();
  device d(port);
  d.send(handshake_packet(imei));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  leave_room(redis, 400 * 1024);

  const bytes refused = send_until_refused(d);
  ASSERT_FALSE(refused.empty()) << "Redis never ran out of memory";
  EXPECT_TRUE(eventually([&] {
    return metric(
               "teltonika_persist_failures_total{instance_id=\"gw-retention\",reason=\"redis\"} ") >
           0;
  }));
  // The consumer catches up; the gateway trims what it acknowledged, and the device's
  // resend of the refused packet is ACKed.
  std::size_t drained = 0;
  for (auto batch = consume(1000); !batch.empty(); batch = consume(1000)) {
    std::vector<std::string> args = {"XACK", stream, "sink"};
    args.insert(args.end(), batch.begin(), batch.end());
    redis.command(args);
    drained += batch.size();
  }
  EXPECT_GT(drained, 0U);
  EXPECT_TRUE(eventually(
      [&] {
        d.send(refused);
        return d.receive(4) == ack(25);
      },
      20s));
}

// No consumer group yet: nobody has said what it reads, yet the stream must not grow
// without end. It keeps --telemetry-ungrouped-maxlen entries, and a warning says that
// it has no group.
TEST_F(TelemetryRetention, AStreamWithoutAGroupKeepsItsFloorAndSaysSo) {
  start({"--telemetry-ungrouped-maxlen", "6", "--failure-log-interval-s", "1"});
  device d(port);
  d.send(handshake_packet(imei));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  for (int i = 0; i < 10; ++i) {
    d.send(codec8e_packet(2, 1'700'000'000'000 + static_cast<std::uint64_t>(i) * 10'000));
    ASSERT_EQ(d.receive(4), ack(2));
  }
  ASSERT_TRUE(eventually([&] { return stored().size() == 6; })) << stored().size();
  // The newest six stay: the last entry stored is among them.
  const auto info = redis.command({"XINFO", "STREAM", stream});
  const auto* last = infra::redis::map_field(info, "last-generated-id");
  ASSERT_NE(last, nullptr);
  EXPECT_TRUE(stored().contains(last->text));
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("telemetry:records has no consumer group and holds") !=
           std::string::npos;
  })) << read_file(log);
  EXPECT_NE(read_file(log).find("tgw sink postgres"), std::string::npos) << read_file(log);
  EXPECT_NE(read_file(log).find("telemetry:records has no consumer group: its oldest"),
            std::string::npos)
      << read_file(log);
}

// The reproduction of a Redis that filled while no group existed: the writes are
// refused (OOM), and so would be the XGROUP CREATE of the sink that is to drain it. Here
// the stream is filled to the brim by hand (as a gateway without the floor left it).
// The floor trims the ungrouped stream under memory pressure: the device's packets are
// ACKed again and a consumer group can be created.
TEST_F(TelemetryRetention, ARedisFullBeforeAnyGroupExistedRecoversAndAConsumerCanJoin) {
  start();  // the defaults, as in the reproduction
  device d(port);
  d.send(handshake_packet(imei));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  leave_room(redis, 4 * 1024 * 1024);
  const std::string filler(4000, 'x');
  bool full = false;
  for (int i = 0; i < 100'000 && !full; ++i)
    full = redis.command({"XADD", stream, "*", "filler", filler}).text.starts_with("OOM");
  ASSERT_TRUE(full) << "Redis never ran out of memory";
  // Past its limit for good, not just at it: nothing fits until something is removed.
  leave_room(redis, -256 * 1024);
  EXPECT_TRUE(eventually(
      [&] {
        d.send(codec8e_packet(1, 1'700'000'000'000));
        return d.receive(4) == ack(1);
      },
      20s))
      << read_file(log);
  EXPECT_NE(read_file(log).find("Redis was near its maxmemory"), std::string::npos)
      << read_file(log);
  const auto created = redis.command({"XGROUP", "CREATE", stream, "sink", "0"});
  EXPECT_EQ(created.text, "OK");
}

}  // namespace
}  // namespace tgw::test
