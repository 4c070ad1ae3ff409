#include "infra/telemetry/projection_rebuilder.hpp"

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "infra/telemetry/redis_telemetry_store.hpp"
#include "infra/telemetry/telemetry_keys.hpp"
#include "tests/support/redis_backend.hpp"

namespace tgw::infra::telemetry {
namespace {

using namespace std::chrono_literals;
using hash = std::map<std::string, std::string>;

record_fields record(std::int64_t ts, int speed) {
  return {std::to_string(ts),    "1",   "25.2616688", "54.6992512", "105", "90", "12",
          std::to_string(speed), "239", "{}"};
}

write_op event(const std::string& imei, const std::string& type, int online,
               std::vector<std::pair<std::string, std::string>> fields) {
  write_op op;
  op.is_packet = false;
  op.event = {imei, type, online, std::move(fields)};
  return op;
}

write_op packet(const std::string& imei, const std::string& fp, std::vector<record_fields> r) {
  write_op op;
  op.packet = {imei, fp, std::move(r), "8E"};
  return op;
}

class ProjectionRebuilder : public ::testing::Test {
 protected:
  // On a cluster, as a gateway would have: the shard count is stored (see redis_backend).
  ProjectionRebuilder() {
    if (backend.on_cluster())
      redis.command({"SET", "tgw:telemetry-shards", std::to_string(backend.shards().count())});
  }
  redis::connection::options where() { return {backend.endpoint(), 1000ms, 5000ms, "test"}; }
  std::string device_key(const std::string& imei) const {
    return keys::device(imei, backend.prefix(imei));
  }

  /// Journals written by the live functions, as an instance of `instance` does.
  void live(const std::string& instance, const std::vector<write_op>& ops) {
    redis_telemetry_store store(where(), {instance, 1000, 0, 0, 1000ms, backend.shards()});
    ASSERT_TRUE(store.load_library(error)) << error;
    for (const write_outcome& o : store.write_batch(ops)) ASSERT_TRUE(o.ok) << o.error;
  }

  void a_fleet() {
    live("gw-a",
         {event(imei_a, "identified", 1, {{"peer", "10.0.0.1:4000"}}),
          packet(imei_a, "f1", {record(1'700'000'000'000, 40), record(1'700'000'001'000, 41)}),
          // Out of order: the newest record is not the last one.
          packet(imei_a, "f2", {record(1'700'000'005'000, 45), record(1'700'000'003'000, 43)}),
          packet(imei_a, "f2", {record(1'700'000'005'000, 45), record(1'700'000'003'000, 43)}),
          event(imei_a, "frame_rejected", -1,
                {{"error", "bad_crc"}, {"offset", "0"}, {"size", "9"}}),
          event(imei_a, "disconnected", 0, {{"reason", "peer closed"}}),
          event(imei_b, "identified", 1, {{"peer", "10.0.0.2:4000"}, {"transport", "udp"}})});
    live("gw-b", {event(imei_a, "identified", 1, {{"peer", "10.0.0.1:4001"}}),
                  packet(imei_a, "f3", {record(1'700'000'009'000, 49)}),
                  event(imei_b, "disconnected", 0, {{"reason", "udp idle"}})});
  }

  hash device(const std::string& imei) {
    hash h;
    const auto v = redis.command({"HGETALL", device_key(imei)});
    for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2)
      h[v.elements[i].text] = v.elements[i + 1].text;
    return h;
  }

  std::optional<rebuild_report> rebuild(rebuild_settings s = {}) {
    projection_rebuilder r(where(), backend.shards());
    return r.run(s, error);
  }

  const std::string imei_a = "356307042441013";
  const std::string imei_b = "356307042441014";
  test::redis_backend backend;
  redis::connection redis = backend.connect();
  std::string error;
};

TEST_F(ProjectionRebuilder, RebuildsExactlyWhatTheLiveFunctionsWrote) {
  a_fleet();
  const hash live_a = device(imei_a);
  const hash live_b = device(imei_b);
  ASSERT_EQ(live_a.at("records_total"), "5");
  ASSERT_EQ(live_a.at("last_ts"), "1700000009000");
  ASSERT_EQ(live_a.at("satellites"), "12");
  // Its second connection (on gw-b) began after 4 records.
  ASSERT_EQ(live_a.at("records_at_connect"), "4");
  ASSERT_TRUE(live_a.contains("connected_ms"));
  // One key per DEL: on a cluster the two may be in different slots.
  redis.command({"DEL", device_key(imei_a)});
  redis.command({"DEL", device_key(imei_b)});

  const auto report = rebuild();
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(device(imei_a), live_a);
  EXPECT_EQ(device(imei_b), live_b);
  EXPECT_EQ(report->devices, 2U);
  EXPECT_EQ(report->events_read, 10U);
  EXPECT_EQ(report->projections_written, 2U);
  EXPECT_EQ(report->differences, live_a.size() + live_b.size());  // all were missing
}

TEST_F(ProjectionRebuilder, ADeviceWithOnlyLifecycleEventsHasNoRecordFields) {
  a_fleet();
  redis.command({"DEL", device_key(imei_b)});
  ASSERT_TRUE(rebuild());
  EXPECT_EQ(device(imei_b), (hash{{"online", "0"},
                                  {"instance", "gw-b"},
                                  {"last_seen_ms", device(imei_b).at("last_seen_ms")},
                                  {"connected_ms", device(imei_b).at("connected_ms")},
                                  {"records_at_connect", "0"}}));
}

TEST_F(ProjectionRebuilder, AnEqualProjectionIsLeftAlone) {
  a_fleet();
  const auto report = rebuild();
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->projections_written, 0U);
  EXPECT_EQ(report->differences, 0U);
}

TEST_F(ProjectionRebuilder, ImeiLimitsTheScope) {
  a_fleet();
  const hash live_a = device(imei_a);
  // One key per DEL: on a cluster the two may be in different slots.
  redis.command({"DEL", device_key(imei_a)});
  redis.command({"DEL", device_key(imei_b)});
  rebuild_settings s;
  s.imei = imei_a;
  const auto report = rebuild(s);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->devices, 1U);
  EXPECT_EQ(device(imei_a), live_a);
  EXPECT_TRUE(device(imei_b).empty());
}

// The progress hook sees every device once, with the running counts.
TEST_F(ProjectionRebuilder, ReportsProgressAfterEachDevice) {
  a_fleet();
  std::vector<std::size_t> seen;
  rebuild_settings s;
  s.progress = [&](const rebuild_report& r) { seen.push_back(r.devices); };
  const auto report = rebuild(s);
  ASSERT_TRUE(report) << error;
  ASSERT_EQ(seen.size(), report->devices);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i + 1);
}

TEST_F(ProjectionRebuilder, DryRunReportsDifferencesAndWritesNothing) {
  a_fleet();
  redis.command({"HSET", device_key(imei_a), "records_total", "999", "stray", "x"});
  redis.command({"HDEL", device_key(imei_a), "lon"});
  const hash tampered = device(imei_a);
  rebuild_settings s;
  s.dry_run = true;
  const auto report = rebuild(s);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(device(imei_a), tampered);
  EXPECT_EQ(report->projections_written, 0U);
  ASSERT_EQ(report->differing.size(), 1U);
  EXPECT_EQ(report->differing[0].imei, imei_a);
  EXPECT_EQ(report->differing[0].fields,
            (std::vector<field_difference>{{"lon", std::nullopt, "25.2616688"},
                                           {"records_total", "999", "5"},
                                           {"stray", "x", std::nullopt}}));
}

TEST_F(ProjectionRebuilder, ReadsLongJournalsInPages) {
  std::vector<write_op> ops;
  for (int i = 0; i < 25; ++i)
    ops.push_back(packet(imei_a, "p" + std::to_string(i), {record(1'700'000'000'000 + i, i)}));
  live("gw-a", ops);
  const hash live_a = device(imei_a);
  redis.command({"DEL", device_key(imei_a)});
  rebuild_settings s;
  s.page = 7;
  const auto report = rebuild(s);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->events_read, 25U);
  EXPECT_EQ(device(imei_a), live_a);
}

TEST_F(ProjectionRebuilder, LiveUpdatesDuringRebuildsAreNotLost) {
  // A rebuild that wrote a hash folded before a concurrent live HINCRBY would leave
  // records_total short, and the live writes after the last rebuild would keep it so;
  // the dry run at the end would show it.
  live("gw-a", {event(imei_a, "identified", 1, {{"peer", "10.0.0.1:4000"}})});
  std::atomic<bool> done{false};
  std::thread writer([&] {
    redis_telemetry_store store(where(), {"gw-a", 100'000, 0, 0, 1000ms, backend.shards()});
    std::string e;
    if (!store.load_library(e)) ADD_FAILURE() << e;
    // 500 packets a second on one device: far busier than any tracker.
    for (int i = 0; i < 400; ++i) {
      if (i == 300) done = true;
      store.write_batch({packet(imei_a, "w" + std::to_string(i), {record(i, i)})});
      std::this_thread::sleep_for(2ms);
    }
  });
  std::uint64_t retries = 0;
  int rebuilds = 0;
  while (!done) {
    ++rebuilds;
    redis.command({"HSET", device_key(imei_a), "records_total", "0"});
    rebuild_settings s;
    s.page = 50;
    const auto report = rebuild(s);
    EXPECT_TRUE(report) << error;
    if (report) retries += report->retries;
  }
  writer.join();
  rebuild_settings s;
  s.dry_run = true;
  const auto report = rebuild(s);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->differences, 0U);
  EXPECT_EQ(device(imei_a).at("records_total"), "400");
  RecordProperty("rebuilds", rebuilds);
  RecordProperty("retries", static_cast<int>(retries));
}

TEST_F(ProjectionRebuilder, RedisDownIsAnError) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  backend.server()->stop();
  EXPECT_FALSE(rebuild());
  EXPECT_FALSE(error.empty());
}

/// Runs the tgw binary and returns its exit code and output.
std::pair<int, std::string> tgw(const std::vector<std::string>& args) {
  static int n = 0;
  // The pid too: ctest -j runs the tests of this file in parallel processes, which
  // would otherwise share (and delete) each other's logs.
  const std::string log = ::testing::TempDir() + "/projections_" + std::to_string(::getpid()) +
                          "_" + std::to_string(++n) + ".log";
  std::remove(log.c_str());
  std::vector<std::string> argv = {TGW_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  test::child_process p(argv, log);
  const int code = p.wait();
  std::ifstream in(log);
  std::stringstream out;
  out << in.rdbuf();
  return {code, out.str()};
}

TEST_F(ProjectionRebuilder, CommandRebuildsAndSummarises) {
  a_fleet();
  redis.command({"DEL", device_key(imei_a)});
  const std::string url = backend.url();
  const auto [dry_code, dry] =
      tgw({"projections", "rebuild", "--redis", url, "--dry-run", "--json"});
  // A dry run is a check: differences found exit 3.
  ASSERT_EQ(dry_code, 3) << dry;
  const auto report = nlohmann::json::parse(dry);
  EXPECT_EQ(report["devices"], 2);
  EXPECT_EQ(report["projections_written"], 0);
  EXPECT_EQ(report["differing"].size(), 1U);
  EXPECT_TRUE(device(imei_a).empty());

  const auto [code, text] = tgw({"projections", "rebuild", "--redis", url, "--imei", imei_a});
  ASSERT_EQ(code, 0) << text;
  EXPECT_NE(text.find("1 devices, 8 events read, 1 projections written"), std::string::npos)
      << text;
  EXPECT_EQ(device(imei_a).at("records_total"), "5");
}

TEST_F(ProjectionRebuilder, ADryRunShowsATimeFieldAsAUtcTimeToo) {
  a_fleet();
  redis.command({"HSET", device_key(imei_a), "last_seen_ms", "1700000000000", "speed", "7"});
  const auto [code, text] = tgw({"projections", "rebuild", "--redis", backend.url(), "--dry-run"});
  ASSERT_EQ(code, 3) << text;
  EXPECT_NE(text.find("last_seen_ms: 1700000000000 (2023-11-14T22:13:20Z) -> "), std::string::npos)
      << text;
  EXPECT_NE(text.find("speed: 7 -> 49\n"), std::string::npos) << text;
}

TEST_F(ProjectionRebuilder, CommandExitCodes) {
  EXPECT_EQ(tgw({"projections", "rebuild", "--bogus"}).first, 2);
  EXPECT_EQ(tgw({"projections"}).first, 2);
  EXPECT_EQ(tgw({"projections", "rebuild", "--redis", "http://nowhere"}).first, 2);
  const std::string down = "redis://127.0.0.1:" + std::to_string(test::free_port());
  const auto [code, text] = tgw({"projections", "rebuild", "--redis", down});
  EXPECT_EQ(code, 1) << text;
  EXPECT_NE(text.find("tgw projections rebuild:"), std::string::npos) << text;
}

}  // namespace
}  // namespace tgw::infra::telemetry
