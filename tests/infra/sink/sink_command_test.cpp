// `tgw sink postgres` as operators run it: the real binary against a real PostgreSQL 15
// and a real redis-server, both started by the fixture, through crashes and outages.
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/infra/sink/sink_test_support.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_cluster.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

class SinkCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pg_ = std::make_unique<postgres_server>(); }
  static void TearDownTestSuite() { pg_.reset(); }

  void SetUp() override {
    (void)pg_->query("DROP TABLE IF EXISTS positions, rejected_entries, position_devices CASCADE");
    const auto init = run_command(shell_line(sink_argv(*pg_, redis_, {"--init"})));
    ASSERT_EQ(init.exit_code, 0) << init.out;
    char tmpl[] = "/tmp/tgw-sink-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure())
      std::filesystem::remove_all(dir_, ec);
    else
      std::cerr << "logs kept in " << dir_ << "\n";
  }

  child_process sink(const std::vector<std::string>& extra, const std::string& log,
                     const std::string& failpoint = {}) {
    return child_process(sink_argv(*pg_, redis_, extra, failpoint), dir_ + "/" + log);
  }
  run_result sink_until_drained(const std::vector<std::string>& extra) {
    auto args = extra;
    args.push_back("--until-drained");
    return run_command(shell_line(sink_argv(*pg_, redis_, args)));
  }
  std::string log(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  long rows() const { return std::stol(pg_->query("SELECT count(*) FROM positions")); }
  long distinct_records() const {
    return std::stol(
        pg_->query("SELECT count(DISTINCT io_named->>'trip_odometer') FROM positions"));
  }
  // A field of the group in XINFO GROUPS: pending, entries-read, lag, consumers.
  long long group_field(const std::string& field, const std::string& group = "positions") {
    const auto reply = redis_conn_.command({"XINFO", "GROUPS", "telemetry:records"});
    for (const auto& g : reply.elements)
      for (std::size_t i = 0; i + 1 < g.elements.size(); i += 2)
        if (g.elements[i].text == "name" && g.elements[i + 1].text == group)
          for (std::size_t j = 0; j + 1 < g.elements.size(); j += 2)
            if (g.elements[j].text == field) return g.elements[j + 1].as_int().value_or(-1);
    return -1;
  }

  static std::unique_ptr<postgres_server> pg_;
  redis_server redis_{true};
  infra::redis::connection redis_conn_ = redis_.connect();
  std::string dir_;
};
std::unique_ptr<postgres_server> SinkCommand::pg_;

TEST_F(SinkCommand, BadFlagsAreUsageErrors) {
  const auto no_dsn = run_tgw("sink postgres --redis redis://127.0.0.1:1");
  EXPECT_EQ(no_dsn.exit_code, 2) << no_dsn.out;
  EXPECT_NE(no_dsn.out.find("--dsn is required"), std::string::npos) << no_dsn.out;
  for (const char* bad : {"--batch 0", "--from later", "--model nope", "--block-ms 0"}) {
    const auto r = run_command(shell_line(sink_argv(*pg_, redis_, {})) + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
  }
  const auto help = run_tgw("sink postgres --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--claim-idle-ms"), std::string::npos);
}

TEST_F(SinkCommand, AnUnreachableServerOrAWrongDsnSaysSoAndExits1) {
  const std::string redis = "redis://127.0.0.1:" + std::to_string(redis_.port());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"host=127.0.0.1 port=" + std::to_string(free_port()) + " user=tgw dbname=tgw",
       "Connection refused"},
      {"host=127.0.0.1 port=" + std::to_string(pg_->port()) + " user=tgw dbname=nowhere",
       "database \"nowhere\" does not exist"},
      {"port=five", "invalid integer value \"five\" for connection option \"port\""},
  };
  for (const auto& [dsn, says] : cases) {
    const auto r = run_command(shell_line(
        {TGW_BINARY, "sink", "postgres", "--dsn", dsn, "--redis", redis, "--until-drained"}));
    EXPECT_EQ(r.exit_code, 1) << dsn << ": " << r.out;
    EXPECT_NE(r.out.find("cannot connect to PostgreSQL with --dsn"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
  }
  // Nothing was read from the stream: no group was even made.
  EXPECT_EQ(redis_conn_.command({"EXISTS", "telemetry:records"}).integer, 0);
}

TEST_F(SinkCommand, AnUnreachableRedisSaysSoAndExits1) {
  const auto r =
      run_command(shell_line({TGW_BINARY, "sink", "postgres", "--dsn", pg_->dsn(), "--redis",
                              "redis://127.0.0.1:" + std::to_string(free_port())}));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("Connection refused (nothing listens there): Redis is unreachable"),
            std::string::npos)
      << r.out;
}

// A taken metrics address is a start-up refusal like an unreachable Redis: one line
// naming the address and the flag, exit 1, before a batch is read.
TEST_F(SinkCommand, ATakenMetricsAddressSaysSoAndExits1) {
  const taken_port holder;
  ASSERT_NE(holder.port(), 0);
  const std::string taken = "127.0.0.1:" + std::to_string(holder.port());
  const auto r = run_command(shell_line(sink_argv(*pg_, redis_, {"--metrics-addr", taken})));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("cannot serve metrics: " + taken +
                       " is in use by another listener; choose another address with "
                       "--metrics-addr"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(redis_conn_.command({"EXISTS", "telemetry:records"}).integer, 0);
}

// --init creates tables and nothing else: no Redis is looked for, none is needed (the
// working directory holds no tgw serve's data, and --redis names nothing that listens).
TEST_F(SinkCommand, InitNeedsNoRedis) {
  (void)pg_->query("DROP TABLE positions CASCADE");
  const auto r =
      run_command("cd " + dir_ + " && " +
                  shell_line({TGW_BINARY, "sink", "postgres", "--dsn", pg_->dsn(), "--init",
                              "--redis", "redis://127.0.0.1:" + std::to_string(free_port())}));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("created positions"), std::string::npos) << r.out;
  const auto bare = run_command("cd " + dir_ + " && " +
                                shell_line({TGW_BINARY, "sink", "postgres", "--dsn", pg_->dsn(),
                                            "--init", "--data-dir", dir_ + "/no-such-dir"}));
  EXPECT_EQ(bare.exit_code, 0) << bare.out;
  EXPECT_EQ(bare.out.find("no Redis found"), std::string::npos) << bare.out;
}

TEST_F(SinkCommand, AMissingSchemaNamesTheInitCommandAndInitIsIdempotent) {
  (void)pg_->query("DROP TABLE positions CASCADE");
  const auto missing = sink_until_drained({});
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find("tgw sink postgres --dsn DSN --init"), std::string::npos)
      << missing.out;
  for (int i = 0; i < 2; ++i) {
    const auto init = run_command(shell_line(sink_argv(*pg_, redis_, {"--init"})));
    EXPECT_EQ(init.exit_code, 0) << init.out;
    EXPECT_NE(init.out.find("created positions"), std::string::npos) << init.out;
  }
  EXPECT_EQ(sink_until_drained({}).exit_code, 0);
}

TEST_F(SinkCommand, EveryEntryIsCommittedOnceAndAcknowledged) {
  add_entries(redis_conn_, 0, 2500);
  const auto r = sink_until_drained({"--batch", "300"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(rows(), 2500);
  EXPECT_EQ(distinct_records(), 2500);
  EXPECT_EQ(group_field("pending"), 0);
  EXPECT_EQ(group_field("lag"), 0);
  EXPECT_NE(r.out.find("2500 records committed"), std::string::npos) << r.out;
  // A second run finds nothing new and adds nothing.
  ASSERT_EQ(sink_until_drained({}).exit_code, 0);
  EXPECT_EQ(rows(), 2500);
}

// On a Redis Cluster the sink reads every key shard's stream, each with a reader of its
// own whose reads, acknowledgements and claims go to the master of that stream's slot.
TEST_F(SinkCommand, ReadsTheStreamThroughARedisCluster) {
  redis_cluster cluster;
  infra::redis::connection on_cluster({cluster.endpoint(), 500ms, 5000ms, "sink-test"});
  // Gateways split the telemetry into one stream per key shard.
  const auto shards = infra::redis::key_shards::cluster(12);
  on_cluster.command({"SET", "tgw:telemetry-shards", "12"});
  add_entries(on_cluster, 0, 1500, &shards);
  // The entries hold records of 2023 (add_entries): a window back to them.
  const auto r = run_command(
      shell_line({TGW_BINARY, "sink", "postgres", "--dsn", pg_->dsn(), "--redis", cluster.url(),
                  "--batch", "300", "--until-drained", "--max-record-age-days", "36500"}));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(rows(), 1500);
  EXPECT_EQ(distinct_records(), 1500);
  int streams_with_entries = 0;
  for (std::uint32_t i = 0; i < shards.count(); ++i) {
    const std::string stream = shards.prefix(i) + "telemetry:records";
    if (on_cluster.command({"XLEN", stream}).integer == 0) continue;
    ++streams_with_entries;
    const auto groups = on_cluster.command({"XINFO", "GROUPS", stream});
    ASSERT_EQ(groups.elements.size(), 1U) << stream << ": " << groups.text;
    EXPECT_EQ(infra::redis::map_field(groups.elements[0], "pending")->integer, 0) << stream;
  }
  EXPECT_GT(streams_with_entries, 1);  // the 7 devices are in several shards
}

TEST_F(SinkCommand, EntriesItCannotReadAreKeptInRejectedEntriesAndAcknowledged) {
  add_entries(redis_conn_, 0, 3);
  redis_conn_.command({"XADD", "telemetry:records", "*", "v", "5", "imei", "356307042441013"});
  redis_conn_.command(
      {"XADD", "telemetry:records", "*", "v", "2", "imei", "356307042441013", "codec", "8"});
  auto extra = redis_conn_.command({"XADD",
                                    "telemetry:records",
                                    "*",
                                    "v",
                                    "2",
                                    "imei",
                                    "356307042441013",
                                    "codec",
                                    "16",
                                    "ts",
                                    "1700000000000",
                                    "pri",
                                    "0",
                                    "lon",
                                    "1",
                                    "lat",
                                    "2",
                                    "alt",
                                    "3",
                                    "ang",
                                    "4",
                                    "sat",
                                    "5",
                                    "spd",
                                    "6",
                                    "evt",
                                    "7",
                                    "io",
                                    "{}",
                                    "gen",
                                    "7",
                                    "odo_src",
                                    "can"});
  const auto r = sink_until_drained({});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(rows(), 4);
  EXPECT_EQ(pg_->query("SELECT reason FROM rejected_entries ORDER BY stream_id"),
            "entry format v=5 is newer than this sink reads (v=4); upgrade tgw sink\n"
            "field ts is missing");
  EXPECT_EQ(pg_->query("SELECT extra->>'odo_src', generation, codec FROM positions WHERE "
                       "stream_id = '" +
                       extra.text + "'"),
            "can|7|16");
  EXPECT_NE(r.out.find("rejected: field ts is missing"), std::string::npos) << r.out;
  EXPECT_EQ(group_field("pending"), 0);
}

TEST_F(SinkCommand, ASinkKilledBeforeItsCommitLeavesItsEntriesToAnother) {
  add_entries(redis_conn_, 0, 1000);
  // One committer: the failpoint then stops the only writer at its first batch.
  auto doomed = sink({"--batch", "400", "--consumer", "doomed", "--committers", "1"}, "doomed.log",
                     "before-commit");
  EXPECT_EQ(doomed.wait(), 128 + SIGKILL);
  EXPECT_EQ(rows(), 0);
  // Read, never acknowledged: the batch it was committing, and those its reading thread
  // had read ahead.
  const long long held = group_field("pending");
  EXPECT_GE(held, 400);
  const auto r = sink_until_drained(
      {"--consumer", "heir", "--claim-idle-ms", "1", "--claim-interval-ms", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(rows(), 1000);
  EXPECT_EQ(distinct_records(), 1000);
  EXPECT_EQ(group_field("pending"), 0);
  // The last progress line counts what the heir took over (with a 1 ms idle time it
  // may also take back its own entries in flight: never fewer).
  const auto at = r.out.rfind(" claimed");
  ASSERT_NE(at, std::string::npos) << r.out;
  const auto from = r.out.rfind(", ", at) + 2;
  EXPECT_GE(std::stoll(r.out.substr(from, at - from)), held) << r.out;
}

TEST_F(SinkCommand, ASinkKilledAfterItsCommitStoresThatBatchOnceWhenItComesBack) {
  add_entries(redis_conn_, 0, 1000);
  auto doomed = sink({"--batch", "400", "--consumer", "again", "--committers", "1"}, "again.log",
                     "after-commit");
  EXPECT_EQ(doomed.wait(), 128 + SIGKILL);
  EXPECT_EQ(rows(), 400);  // Committed, and not acknowledged (with the next batch, if read).
  EXPECT_GE(group_field("pending"), 400);
  const auto r = sink_until_drained({"--batch", "400", "--consumer", "again"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(rows(), 1000);
  EXPECT_EQ(distinct_records(), 1000);
  EXPECT_NE(r.out.find("400 of 400 rows were committed before"), std::string::npos) << r.out;
  EXPECT_EQ(group_field("pending"), 0);
}

TEST_F(SinkCommand, RepeatedSigkillsMidStreamLoseAndDoubleNothing) {
  add_entries(redis_conn_, 0, 20000);
  for (int round = 0; round < 4; ++round) {
    auto s = sink({"--batch", "250", "--consumer", "flaky"}, "flaky.log");
    const long before = rows();
    ASSERT_TRUE(eventually([&] { return rows() > before; }, 30s));
    s.signal(SIGKILL);
    EXPECT_EQ(s.wait(), 128 + SIGKILL);
  }
  const auto r = sink_until_drained({"--batch", "250", "--consumer", "flaky"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(rows(), 20000);
  EXPECT_EQ(distinct_records(), 20000);
  EXPECT_EQ(group_field("pending"), 0);
}

TEST_F(SinkCommand, APostgresRestartHoldsTheAcknowledgementsUntilItIsBack) {
  auto s = sink({"--batch", "200"}, "restart.log");
  add_entries(redis_conn_, 0, 1000);
  ASSERT_TRUE(eventually([&] { return rows() == 1000 && group_field("pending") == 0; }, 30s));
  pg_->stop();
  add_entries(redis_conn_, 1000, 1000);
  // The sink reads a batch and cannot commit it: nothing past the first 1000 is
  // acknowledged while PostgreSQL is away.
  ASSERT_TRUE(eventually([&] { return group_field("pending") > 0; }, 20s));
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(group_field("entries-read") - group_field("pending"), 1000);
  pg_->start();
  ASSERT_TRUE(eventually([&] { return rows() == 2000 && group_field("pending") == 0; }, 60s))
      << rows() << "\n"
      << log("restart.log");
  EXPECT_EQ(distinct_records(), 2000);
  s.signal(SIGTERM);
  EXPECT_EQ(s.wait(), 0);
  EXPECT_NE(log("restart.log").find("PostgreSQL"), std::string::npos);
}

TEST_F(SinkCommand, ARedisRestartIsRiddenOut) {
  auto s = sink({"--batch", "200"}, "redis.log");
  add_entries(redis_conn_, 0, 1000);
  ASSERT_TRUE(eventually([&] { return rows() == 1000; }, 30s));
  redis_.stop();
  std::this_thread::sleep_for(1500ms);
  redis_.start();
  // The test's own connection broke too: its next command reconnects.
  ASSERT_TRUE(eventually([&] { return redis_conn_.command({"PING"}).text == "PONG"; }));
  EXPECT_EQ(redis_conn_.command({"XLEN", "telemetry:records"}).integer, 1000);  // Kept (AOF).
  add_entries(redis_conn_, 1000, 1000);
  ASSERT_TRUE(eventually([&] { return rows() == 2000 && group_field("pending") == 0; }, 60s))
      << log("redis.log");
  EXPECT_EQ(distinct_records(), 2000);
  s.signal(SIGTERM);
  EXPECT_EQ(s.wait(), 0);
  EXPECT_NE(log("redis.log").find("127.0.0.1:" + std::to_string(redis_.port()) + "/0 is back"),
            std::string::npos)
      << log("redis.log");
}

TEST_F(SinkCommand, AnXackRedisRefusesIsRetriedAndTheCommittedBatchIsNotWrittenAgain) {
  // A Redis user that may read the group but not acknowledge: every XACK is refused.
  redis_conn_.command({"ACL", "SETUSER", "sink", "on", ">pw", "~*", "+@all", "-xack"});
  add_entries(redis_conn_, 0, 500);
  auto args = sink_argv(*pg_, redis_, {"--batch", "100"});
  for (auto& a : args)
    if (a.starts_with("redis://")) a = "redis://sink:pw@127.0.0.1:" + std::to_string(redis_.port());
  child_process s(args, dir_ + "/xack.log");
  // Committed, and all still pending: nothing was acknowledged.
  ASSERT_TRUE(eventually([&] { return rows() >= 100; }, 30s)) << log("xack.log");
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(group_field("entries-read") - group_field("pending"), 0);
  EXPECT_NE(log("xack.log").find("the batch is committed and stays pending"), std::string::npos)
      << log("xack.log");
  redis_conn_.command({"ACL", "SETUSER", "sink", "+xack"});
  ASSERT_TRUE(eventually([&] { return rows() == 500 && group_field("pending") == 0; }, 60s))
      << log("xack.log");
  EXPECT_EQ(distinct_records(), 500);
  s.signal(SIGTERM);
  EXPECT_EQ(s.wait(), 0);
}

TEST_F(SinkCommand, TwoSinksInOneGroupShareTheStreamAndStoreEachRecordOnce) {
  auto a = sink({"--batch", "100", "--consumer", "a"}, "a.log");
  auto b = sink({"--batch", "100", "--consumer", "b"}, "b.log");
  ASSERT_TRUE(eventually([&] { return group_field("consumers") == 2; }, 20s));
  for (int i = 0; i < 20; ++i) add_entries(redis_conn_, i * 1000, 1000);
  ASSERT_TRUE(eventually([&] { return rows() == 20000 && group_field("pending") == 0; }, 60s));
  EXPECT_EQ(distinct_records(), 20000);
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  EXPECT_EQ(a.wait(), 0);
  EXPECT_EQ(b.wait(), 0);
  // Each took part: the last progress line of each counts its own records.
  const auto committed = [](const std::string& text) {
    const auto at = text.rfind(" records committed");
    const auto start = text.rfind(": ", at) + 2;
    return std::stol(text.substr(start, at - start));
  };
  const long by_a = committed(log("a.log"));
  const long by_b = committed(log("b.log"));
  EXPECT_GT(by_a, 0);
  EXPECT_GT(by_b, 0);
  EXPECT_EQ(by_a + by_b, 20000);
}

TEST_F(SinkCommand, MetricsAndReadinessAreServed) {
  const std::uint16_t port = free_port();
  auto s = sink({"--metrics-addr", "127.0.0.1:" + std::to_string(port), "--consumer", "m"},
                "metrics.log");
  add_entries(redis_conn_, 0, 300);
  ASSERT_TRUE(eventually([&] { return rows() == 300; }, 30s));
  std::string metrics;
  ASSERT_TRUE(eventually(
      [&] {
        metrics = http_get(port, "/metrics");
        return metrics.find(
                   "teltonika_sink_records_total{group=\"positions\",consumer=\"m\"} 300") !=
               std::string::npos;
      },
      10s))
      << metrics;
  EXPECT_NE(
      metrics.find("teltonika_sink_up{group=\"positions\",consumer=\"m\",store=\"postgres\"} 1"),
      std::string::npos);
  EXPECT_NE(http_get(port, "/readyz").find("200"), std::string::npos);
  pg_->stop();
  add_entries(redis_conn_, 300, 10);
  EXPECT_TRUE(
      eventually([&] { return http_get(port, "/readyz").find("503") != std::string::npos; }, 30s));
  pg_->start();
  EXPECT_TRUE(eventually([&] { return rows() == 310; }, 60s));
  EXPECT_NE(http_get(port, "/readyz").find("200"), std::string::npos);
}

// A device with a garbage clock (1970 before its first fix, a GPS week rollover, dates
// decades ahead) would make a day partition for every day it names: thousands, until
// PostgreSQL runs out of lock slots for one query over positions. Only records within
// the window around their storing time reach positions; the others are kept whole in
// rejected_entries, and the device is named once in the log.
TEST_F(SinkCommand, RecordTimesOutsideThePlausibleWindowMakeNoPartitions) {
  constexpr std::int64_t day = 86'400'000;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const std::string wrong_clock = "356307042441013";
  std::vector<std::vector<std::string>> entries;
  // 1970-01-01, 1999 (1024 weeks back), then one record a day over 60 years.
  std::vector<std::int64_t> garbage = {0, now - 1024LL * 7 * day};
  for (std::int64_t t = 0; t < now + 4000 * day; t += 123 * day) garbage.push_back(t);
  std::size_t outside = 0;
  for (const std::int64_t ts : garbage) {
    if (ts >= now - 366 * day && ts <= now + day) continue;  // by chance inside
    entries.push_back(telemetry_entry_xadd(wrong_clock, ts, R"({"239":1})"));
    ++outside;
  }
  // Inside: a moment ago, 300 days buffered in a device's flash, an hour ahead.
  const std::vector<std::int64_t> plausible = {now - 60'000, now - 300 * day, now + 3'600'000};
  for (const std::int64_t ts : plausible)
    entries.push_back(telemetry_entry_xadd("356307042441021", ts, R"({"239":1})"));
  // Five days ahead: outside by default, inside a window set wider below.
  entries.push_back(telemetry_entry_xadd("356307042441039", now + 5 * day, R"({"239":1})"));
  for (const auto& reply : redis_conn_.pipeline(entries)) ASSERT_FALSE(reply.is_error());

  // The defaults: no --max-record-* flag.
  const auto drained = run_command(
      shell_line({TGW_BINARY, "sink", "postgres", "--dsn", pg_->dsn(), "--redis",
                  "redis://127.0.0.1:" + std::to_string(redis_.port()), "--until-drained"}));
  ASSERT_EQ(drained.exit_code, 0) << drained.out;
  EXPECT_EQ(rows(), static_cast<long>(plausible.size()));
  const long days = std::stol(
      pg_->query("SELECT count(DISTINCT date_trunc('day', ts AT TIME ZONE 'UTC')) FROM positions"));
  EXPECT_LE(days, 3);
  EXPECT_EQ(pg_->query("SELECT count(*) FROM pg_inherits WHERE inhparent = 'positions'::regclass"),
            std::to_string(days));
  EXPECT_EQ(pg_->query("SELECT count(*) FROM rejected_entries WHERE reason LIKE "
                       "'%outside the plausible window (--max-record-age-days 366)'"),
            std::to_string(outside - static_cast<std::size_t>(std::count_if(
                                         garbage.begin(), garbage.end(),
                                         [&](std::int64_t t) { return t > now + day; }))));
  EXPECT_EQ(pg_->query("SELECT count(*) FROM rejected_entries WHERE reason LIKE "
                       "'%outside the plausible window (--max-record-ahead-days 1)'"),
            std::to_string(1 + std::count_if(garbage.begin(), garbage.end(),
                                             [&](std::int64_t t) { return t > now + day; })));
  const std::string at_1970 =
      pg_->query("SELECT reason FROM rejected_entries WHERE fields->>'ts' = '0' LIMIT 1");
  EXPECT_TRUE(at_1970.starts_with("field ts 0 (1970-01-01T00:00:00Z) is ")) << at_1970;
  EXPECT_NE(at_1970.find(" days before the gateway stored it ("), std::string::npos) << at_1970;
  // Named once, however many it sent.
  std::size_t named = 0;
  for (auto at = drained.out.find("device " + wrong_clock + " sends records outside");
       at != std::string::npos; at = drained.out.find("device " + wrong_clock, at + 1))
    ++named;
  EXPECT_EQ(named, 1U) << drained.out;

  // The window is the operator's: five days ahead is inside a week.
  ASSERT_FALSE(
      redis_conn_.command(telemetry_entry_xadd("356307042441047", now + 5 * day, R"({"239":1})"))
          .is_error());
  const auto wider = run_command("TGW_SINK_MAX_RECORD_AHEAD_DAYS=7 " +
                                 shell_line(sink_argv(*pg_, redis_, {"--until-drained"})));
  ASSERT_EQ(wider.exit_code, 0) << wider.out;
  EXPECT_EQ(pg_->query("SELECT count(*) FROM positions WHERE imei = '356307042441047'"), "1");
}

}  // namespace
}  // namespace tgw::test
