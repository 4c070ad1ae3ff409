// position_writer against a real PostgreSQL 15 started by the fixture.
#include "infra/sink/position_writer.hpp"

#include <gtest/gtest.h>

#include "tests/support/postgres_server.hpp"

namespace tgw::infra::sink {
namespace {

position_row row(const std::string& id, std::int64_t ts_ms,
                 const std::string& imei = "356307042441013") {
  position_row r;
  r.stream_id = id;
  r.stored_ms = *entry_id_ms(id);
  r.imei = imei;
  r.codec = "8";
  r.ts_ms = ts_ms;
  r.priority = 1;
  r.longitude_e7 = 252616688;
  r.latitude_e7 = -546992512;
  r.altitude = 105;
  r.angle = 90;
  r.satellites = 12;
  r.speed = 41;
  r.event_io = 239;
  r.io = R"({"239":1,"78":"18446744073709551615"})";
  r.io_named = R"({"ignition":1})";
  return r;
}

class PositionWriter : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<test::postgres_server>(); }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    (void)server_->query(
        "DROP TABLE IF EXISTS positions, rejected_entries, position_devices CASCADE");
    std::string error;
    ASSERT_TRUE(create_positions_schema(pg_, error)) << error;
  }
  static std::string count(const std::string& table) {
    return server_->query("SELECT count(*) FROM " + table);
  }

  static std::unique_ptr<test::postgres_server> server_;
  pg_connection pg_{server_->dsn()};
};
std::unique_ptr<test::postgres_server> PositionWriter::server_;

TEST_F(PositionWriter, ABatchIsCommittedWithEveryColumnAsGiven) {
  position_writer writer(pg_, "telemetry:records");
  auto r = row("1700000001000-0", 1700000000123);
  r.extra = R"({"note":"tab\there"})";
  const auto out = writer.write({r}, {});
  ASSERT_TRUE(out.committed) << out.error;
  EXPECT_EQ(out.inserted, 1);
  EXPECT_EQ(server_->query("SELECT imei, ts = to_timestamp(1700000000.123), stream_id, "
                           "stored_at = to_timestamp(1700000001), codec, priority, latitude, "
                           "longitude, altitude, angle, satellites, speed, event_io, generation "
                           "IS NULL, io->>'78', io_named->>'ignition', extra->>'note' FROM "
                           "positions"),
            "356307042441013|t|1700000001000-0|t|8|1|-54.6992512|25.2616688|105|90|12|41|239|t|"
            "18446744073709551615|1|tab\there");
}

TEST_F(PositionWriter, ABatchWrittenAgainAddsNothing) {
  position_writer writer(pg_, "telemetry:records");
  const std::vector<position_row> batch{row("1-0", 1000), row("1-1", 2000), row("1-2", 3000)};
  ASSERT_TRUE(writer.write(batch, {}).committed);
  const auto again = writer.write(batch, {});
  ASSERT_TRUE(again.committed) << again.error;
  EXPECT_EQ(again.inserted, 0);
  EXPECT_EQ(again.duplicates, 3);
  // Half old, half new: only the new ones go in.
  const auto mixed = writer.write({row("1-2", 3000), row("1-3", 4000)}, {});
  ASSERT_TRUE(mixed.committed) << mixed.error;
  EXPECT_EQ(mixed.inserted, 1);
  EXPECT_EQ(mixed.duplicates, 1);
  EXPECT_EQ(count("positions"), "4");
  // The fast path again after the slow one.
  const auto fresh = writer.write({row("1-4", 5000)}, {});
  EXPECT_EQ(fresh.inserted, 1);
  EXPECT_EQ(count("positions"), "5");
}

TEST_F(PositionWriter, RecordsOfEachDayGoToThatDaysPartition) {
  position_writer writer(pg_, "telemetry:records");
  // 2023-11-14 23:59:59.999 and 2023-11-15 00:00:00.000 UTC, and 1970-01-01.
  ASSERT_TRUE(
      writer.write({row("1-0", 1700006399999), row("1-1", 1700006400000), row("1-2", 0)}, {})
          .committed);
  EXPECT_EQ(server_->query("SELECT tableoid::regclass, count(*) FROM positions GROUP BY 1 ORDER BY "
                           "tableoid::regclass::text"),
            "positions_19700101|1\npositions_20231114|1\npositions_20231115|1");
}

TEST_F(PositionWriter, APartitionTheOperatorMadeServesItsDays) {
  (void)server_->query(
      "CREATE TABLE positions_2023_11 PARTITION OF positions FOR VALUES FROM ('2023-11-01') TO "
      "('2023-12-01')");
  position_writer writer(pg_, "telemetry:records");
  const auto out = writer.write({row("1-0", 1700006399999)}, {});
  ASSERT_TRUE(out.committed) << out.error;
  EXPECT_EQ(server_->query("SELECT tableoid::regclass FROM positions"), "positions_2023_11");
}

TEST_F(PositionWriter, RejectedEntriesAreCommittedWithTheBatchOnce) {
  position_writer writer(pg_, "telemetry:records");
  const std::vector<rejected_entry> bad{{"1-9", R"({"v":"3"})", "entry format v=3 is newer"}};
  ASSERT_TRUE(writer.write({row("1-0", 1000)}, bad).committed);
  const auto again = writer.write(std::vector<position_row>{}, bad);
  ASSERT_TRUE(again.committed) << again.error;
  EXPECT_EQ(server_->query("SELECT stream, stream_id, fields->>'v', reason FROM rejected_entries"),
            "telemetry:records|1-9|3|entry format v=3 is newer");
}

TEST_F(PositionWriter, AnEntryOfBinaryJunkIsStillStoredAsRejected) {
  std::string error;
  auto names = telemetry::io_dictionary::builtin("fmb", error);
  const std::string junk("\0\xff\xfe\t\n\\", 6);
  const auto parsed = parse_entry("1-5", {{"v", "2"}, {"imei", junk}, {junk, junk}}, *names);
  ASSERT_TRUE(std::holds_alternative<rejected_entry>(parsed));
  position_writer writer(pg_, "telemetry:records");
  const auto out = writer.write(std::vector<position_row>{}, {std::get<rejected_entry>(parsed)});
  ASSERT_TRUE(out.committed) << out.error;
  EXPECT_EQ(count("rejected_entries"), "1");
}

TEST_F(PositionWriter, ASchemaCheckSaysWhatIsMissingAndWhatToRun) {
  EXPECT_EQ(check_positions_schema(pg_), "");
  (void)server_->query("DROP TABLE positions CASCADE");
  EXPECT_NE(check_positions_schema(pg_).find("tgw sink postgres --dsn DSN --init"),
            std::string::npos);
  (void)server_->query("CREATE TABLE positions (imei text)");
  EXPECT_NE(check_positions_schema(pg_).find("not partitioned"), std::string::npos);
}

TEST_F(PositionWriter, ATableDroppedUnderTheWriterIsAnErrorAndNothingIsCommitted) {
  position_writer writer(pg_, "telemetry:records");
  ASSERT_TRUE(writer.write({row("1-0", 1000)}, {}).committed);
  (void)server_->query("DROP TABLE rejected_entries");
  const auto out = writer.write({row("1-1", 2000)}, {{"1-2", "{}", "bad"}});
  EXPECT_FALSE(out.committed);
  EXPECT_FALSE(out.connection_lost);
  EXPECT_NE(out.error.find("rejected_entries"), std::string::npos) << out.error;
  EXPECT_EQ(count("positions"), "1");  // 1-1 rolled back with the failed batch.
}

TEST_F(PositionWriter, APartitionDroppedUnderTheWriterIsMadeAgainOnTheRetry) {
  position_writer writer(pg_, "telemetry:records");
  ASSERT_TRUE(writer.write({row("1-0", 1700006399999)}, {}).committed);
  (void)server_->query("DROP TABLE positions_20231114");
  // The writer still believes the day has its partition: PostgreSQL finds none for the
  // row, the batch is not committed, and the failure is one to retry.
  const auto out = writer.write({row("1-1", 1700006399998)}, {});
  EXPECT_FALSE(out.committed);
  EXPECT_TRUE(out.connection_lost) << out.error;
  EXPECT_NE(out.error.find("no partition"), std::string::npos) << out.error;
  const auto retry = writer.write({row("1-1", 1700006399998)}, {});
  ASSERT_TRUE(retry.committed) << retry.error;
  EXPECT_EQ(count("positions"), "1");
}

TEST_F(PositionWriter, AServerGoneIsAConnectionLossAndTheRetryCommits) {
  position_writer writer(pg_, "telemetry:records");
  ASSERT_TRUE(writer.write({row("1-0", 1000)}, {}).committed);
  server_->stop();
  const auto out = writer.write({row("1-1", 2000)}, {});
  EXPECT_FALSE(out.committed);
  EXPECT_TRUE(out.connection_lost) << out.error;
  server_->start();
  const auto retry = writer.write({row("1-1", 2000)}, {});
  ASSERT_TRUE(retry.committed) << retry.error;
  EXPECT_EQ(count("positions"), "2");
}

}  // namespace
}  // namespace tgw::infra::sink
