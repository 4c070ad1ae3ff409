// last_positions against a real PostgreSQL 15: after any load, in any order, delivered
// twice or committed out of order by two connections, it equals the newest row of each
// device in positions, as the DISTINCT ON query over positions finds it; a device's row
// is found through indexes alone.
#include "infra/sink/last_positions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "infra/sink/copy_binary.hpp"
#include "infra/sink/position_writer.hpp"
#include "tests/infra/sink/sink_test_support.hpp"

namespace tgw::infra::sink {
namespace {

using test::postgres_server;

constexpr std::int64_t day_ms = 86'400'000;
constexpr std::int64_t t0 = 1'700'000'000'000;  // 2023-11-14T22:13:20Z

// The query docs/TELEMETRY.md compares last_positions with.
std::string newest_by_query() {
  return std::string("SELECT DISTINCT ON (imei) ") + position_columns() +
         " FROM positions ORDER BY imei, ts DESC, stream_id DESC";
}
std::string last_positions_rows() {
  return std::string("SELECT ") + position_columns() + " FROM last_positions ORDER BY imei";
}

position_row row(const std::string& imei, std::int64_t ts, const std::string& id, int speed) {
  position_row r;
  r.stream_id = id;
  r.stored_ms = *entry_id_ms(id);
  r.imei = imei;
  r.codec = "8E";
  r.ts_ms = ts;
  r.priority = 1;
  r.longitude_e7 = 252616688 + speed;
  r.latitude_e7 = 546992512 - speed;
  r.satellites = speed % 20;
  r.speed = speed;
  r.io = "{\"199\":" + std::to_string(speed) + "}";
  r.io_named = "{}";
  return r;
}

class LastPositions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<postgres_server>(); }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    (void)server_->query(
        "DROP TABLE IF EXISTS positions, rejected_entries, position_devices CASCADE");
    std::string error;
    ASSERT_TRUE(create_positions_schema(pg_, error)) << error;
  }
  static void expect_equal_to_the_query() {
    const std::string want = server_->query(newest_by_query());
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(server_->query(last_positions_rows()), want);
  }

  static std::unique_ptr<postgres_server> server_;
  pg_connection pg_{server_->dsn()};
};
std::unique_ptr<postgres_server> LastPositions::server_;

TEST_F(LastPositions, TheNewestRowOfEachDeviceWhateverOrderBatchesComeIn) {
  position_writer writer(pg_, "telemetry:records");
  // Late records (a device's buffer after a night without network), records of one
  // time told apart by stream id, and rows of days before.
  const std::vector<position_row> first = {
      row("356307042441013", t0 + day_ms, "1700090000000-0", 10),
      row("356307042441013", t0, "1700090000000-1", 11),
      row("356307042441021", t0 + 2 * day_ms, "1700090000000-2", 12),
      row("356307042441021", t0 + 2 * day_ms, "1700090000000-3", 13)};
  ASSERT_TRUE(writer.write(first, {}).committed);
  expect_equal_to_the_query();
  const std::vector<position_row> older = {
      row("356307042441013", t0 - day_ms, "1700090000001-0", 20),
      row("356307042441039", t0 - 3 * day_ms, "1700090000001-1", 21)};
  ASSERT_TRUE(writer.write(older, {}).committed);
  expect_equal_to_the_query();
  EXPECT_EQ(server_->query("SELECT speed FROM last_positions WHERE imei = '356307042441013'"),
            "10");
  // Delivered again after a crash: nothing changes.
  ASSERT_TRUE(writer.write(first, {}).committed);
  expect_equal_to_the_query();

  // Two committers, the later batch committed first: the newest row shows all the same.
  pg_connection other_pg{server_->dsn()};
  position_writer other(other_pg, "telemetry:records");
  const std::vector<position_row> newer = {
      row("356307042441013", t0 + 3 * day_ms, "1700090000002-0", 30)};
  const std::vector<position_row> between = {
      row("356307042441013", t0 + 2 * day_ms, "1700090000002-1", 31)};
  ASSERT_TRUE(other.write(newer, {}).committed);
  ASSERT_TRUE(writer.write(between, {}).committed);
  expect_equal_to_the_query();
  EXPECT_EQ(server_->query("SELECT speed FROM last_positions WHERE imei = '356307042441013'"),
            "30");
  EXPECT_EQ(server_->query("SELECT count(*) FROM last_positions"), "3");
}

TEST_F(LastPositions, InitFillsItFromPositionsStoredBeforeItExisted) {
  position_writer writer(pg_, "telemetry:records");
  ASSERT_TRUE(writer
                  .write({row("356307042441013", t0, "1-0", 1),
                          row("356307042441013", t0 + day_ms, "1-1", 2),
                          row("356307042441021", t0, "1-2", 3)},
                         {})
                  .committed);
  // A database of an older tgw: no last_positions. The sink refuses it and says what
  // to run; --init makes it, its device list filled from positions.
  (void)server_->query("DROP TABLE position_devices CASCADE");
  EXPECT_NE(
      check_positions_schema(pg_).find("last_positions or the table position_devices is missing"),
      std::string::npos);
  EXPECT_NE(check_positions_schema(pg_).find("tgw sink postgres --dsn DSN --init"),
            std::string::npos);
  std::string error;
  ASSERT_TRUE(create_positions_schema(pg_, error)) << error;
  EXPECT_EQ(check_positions_schema(pg_), "");
  expect_equal_to_the_query();
  EXPECT_EQ(server_->query("SELECT count(*) FROM last_positions"), "2");
}

TEST_F(LastPositions, TheDevicesOfABatchEachOnceSortedAsAnArray) {
  const auto devices =
      devices_of({row("356307042441021", 5, "9-0", 1), row("356307042441013", 7, "9-1", 2),
                  row("356307042441021", 9, "9-2", 3)});
  EXPECT_EQ(devices, (std::vector<std::string>{"356307042441013", "356307042441021"}));
  EXPECT_EQ(imei_array(devices), R"({"356307042441013","356307042441021"})");
  EXPECT_EQ(imei_array({"a\"b\\c"}), R"({"a\"b\\c"})");
}

// Through the sink itself: several thousand records of many devices over five days, in
// no order of time, in batches on two committers.
TEST(LastPositionsEndToEnd, EqualsTheDistinctOnQueryAfterALoadAcrossDays) {
  postgres_server pg;
  test::redis_server redis;
  auto conn = redis.connect();
  std::vector<std::pair<std::string, std::int64_t>> records;
  for (int d = 0; d < 1500; ++d) {
    const std::string imei = std::to_string(356307042000000 + d * 7);
    for (int k = 0; k < 4; ++k) records.emplace_back(imei, t0 + (d + k) % 5 * day_ms + k * 1000);
    // One device in ten has two records of its newest time.
    if (d % 10 == 0) records.emplace_back(imei, t0 + (d + 3) % 5 * day_ms + 3000);
  }
  std::shuffle(records.begin(), records.end(), std::mt19937{36});
  std::vector<std::vector<std::string>> xadds;
  for (std::size_t i = 0; i < records.size(); ++i)
    xadds.push_back(test::telemetry_entry_xadd(records[i].first, records[i].second,
                                               "{\"199\":" + std::to_string(i) + "}",
                                               static_cast<int>(i % 120)));
  for (const auto& reply : conn.pipeline(xadds)) ASSERT_FALSE(reply.is_error()) << reply.text;

  ASSERT_EQ(test::run_command(test::shell_line(test::sink_argv(pg, redis, {"--init"}))).exit_code,
            0);
  const auto drained = test::run_command(test::shell_line(
      test::sink_argv(pg, redis, {"--until-drained", "--batch", "500", "--committers", "2"})));
  ASSERT_EQ(drained.exit_code, 0) << drained.out;
  ASSERT_EQ(pg.query("SELECT count(*) FROM positions"), std::to_string(records.size()));
  ASSERT_EQ(pg.query("SELECT count(DISTINCT ts::date) FROM positions"), "5");

  const std::string want = pg.query(newest_by_query());
  EXPECT_EQ(pg.query("SELECT count(*) FROM last_positions"), "1500");
  EXPECT_EQ(pg.query(last_positions_rows()), want);

  // One device's last position is index lookups: the device in position_devices' key,
  // then one backward step in each day partition's primary key.
  (void)pg.query("ANALYZE");
  const std::string plan =
      pg.query("EXPLAIN SELECT * FROM last_positions WHERE imei = '356307042000007'");
  EXPECT_NE(plan.find("Index Only Scan using position_devices_pkey on position_devices"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("Limit"), std::string::npos) << plan;
  for (int day = 14; day <= 18; ++day)
    EXPECT_NE(plan.find("Index Scan Backward using positions_202311" + std::to_string(day) +
                        "_pkey on positions_202311" + std::to_string(day)),
              std::string::npos)
        << day << "\n"
        << plan;
  EXPECT_EQ(plan.find("Seq Scan"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("Sort"), std::string::npos) << plan;
}

}  // namespace
}  // namespace tgw::infra::sink
