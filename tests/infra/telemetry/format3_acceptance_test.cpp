// Telemetry entry formats 3 and 4 end to end: frames built for each value format 2 stored
// ambiguously go through a real `tgw serve` into the stream, and every reader (the
// stream itself, `tgw decode`, `tgw telemetry tail`, `tgw sink postgres`) tells them
// apart and loses nothing; a format 2 entry of an older gateway in the same stream is
// read by each of them too.
#include <signal.h>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codecs/avl_encode.hpp"
#include "infra/text/hex.hpp"
#include "tests/infra/sink/sink_test_support.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* imei = "356307042441013";
constexpr std::uint64_t two_53_plus_1 = (std::uint64_t{1} << 53) + 1;
constexpr std::uint64_t two_63 = std::uint64_t{1} << 63;
constexpr std::uint64_t two_64_minus_1 = ~std::uint64_t{0};

// Per record: ts as stored, and its ISO 8601 form (checked against an independent
// computation: 400-year cycles and a calendar library within one cycle).
const std::vector<std::pair<std::uint64_t, std::string>> times = {
    {1'700'000'000'000, "2023-11-14T22:13:20.000Z"},
    {two_53_plus_1, "+287396-10-12T08:59:00.993Z"},
    {two_63, "+292278994-08-17T07:12:55.808Z"},
    {two_64_minus_1, "+584556019-04-03T14:25:51.615Z"},
};

// IO id 1 twice (0, then 1); a Dallas sensor's "not connected" code (72 = 3000); on id
// 11 an 8-byte value of 2^53 + 1 and NX bytes whose hex is the same digits; on id 66
// NX bytes 0x12 0x34 (which format 2 readers took for 1.234 V).
std::vector<std::uint8_t> frame() {
  std::vector<codecs::avl_record_data> records;
  for (const auto& [ts, iso] : times) {
    codecs::avl_record_data r;
    r.timestamp_ms = ts;
    r.latitude = 546992512;
    r.longitude = 252616688;
    r.io = {{1, 1, 0, {}},
            {1, 1, 1, {}},
            {72, 4, 3000, {}},
            {11, 8, two_53_plus_1, {}},
            {11, 0, 0, {0x90, 0x07, 0x19, 0x92, 0x54, 0x74, 0x09, 0x93}},
            {66, 0, 0, {0x12, 0x34}}};
    records.push_back(r);
  }
  std::vector<std::uint8_t> out;
  EXPECT_EQ(codecs::encode_avl_frame(codecs::codec_id::codec8e, records, out), codecs::errc::ok);
  return out;
}

// Wire order: the encoder groups by width (1, 4, 8 bytes, then NX), and format 4 keeps
// each integer's width.
const json stored_io =
    json::parse(R"([[1,"0",1],[1,"1",1],[72,"3000",4],[11,"9007199254740993",8],)"
                R"([11,{"hex":"9007199254740993"}],[66,{"hex":"1234"}]])");
const json named_io = json::parse(
    R"({"digital_input_1":["0","1"],"dallas_temperature_1":{"error":"not_connected"},)"
    R"("iccid1":["9007199254740993",{"hex":"9007199254740993"}],"external_voltage":{"hex":"1234"}})");

// The format 2 entry an older gateway wrote into the same stream.
const char* format2_io = R"({"1":0,"1":1,"78":"18446744073709551615","281":"DEAD01"})";
const json format2_as_format3 =
    json::parse(R"([[1,"0"],[1,"1"],[78,"18446744073709551615"],[281,{"hex":"DEAD01"}]])");
const json format2_named =
    json::parse(R"({"digital_input_1":["0","1"],"ibutton":"18446744073709551615"})");

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.front() == '{') out.push_back(json::parse(line));
  return out;
}

// A real PostgreSQL, redis-server and `tgw serve`, and a device that sends one frame.
class StoredFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tgw-formats-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
    serve.emplace(
        std::vector<std::string>{TGW_BINARY, "serve", "--port", std::to_string(port), "--bind",
                                 "127.0.0.1", "--metrics-addr", "", "--redis", url},
        dir + "/serve.log");
    ASSERT_TRUE(eventually([&] { return device(port).connected(); }, 20s));
  }
  void TearDown() override {
    serve->signal(SIGTERM);
    EXPECT_EQ(serve->wait(), 0);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  /// Sends `bytes` as the device and expects every one of its `records` ACKed.
  void deliver(const std::vector<std::uint8_t>& bytes, std::uint8_t records) {
    device d(port);
    d.send(handshake_packet(imei));
    ASSERT_EQ(d.receive(1), test::bytes{0x01});
    d.send(bytes);
    ASSERT_EQ(d.receive(4), (test::bytes{0, 0, 0, records}));
  }

  postgres_server pg;
  redis_server redis;
  infra::redis::connection conn = redis.connect();
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port());
  const std::uint16_t port = free_port();
  std::string dir;
  std::optional<child_process> serve;
};

TEST_F(StoredFormats, Format3CasesAreStoredDecodedTailedAndSunkApart) {
  const auto older = conn.command(telemetry_entry_xadd(imei, 1'700'000'000'500, format2_io));
  ASSERT_FALSE(older.is_error()) << older.text;
  const auto bytes = frame();
  // Every record ACKed, the extreme times included.
  deliver(bytes, 4);
  if (HasFatalFailure()) return;

  // Stored: v=4, ts the exact decimal, io the format 4 array.
  const auto entries = conn.command({"XRANGE", "telemetry:records", "-", "+"});
  ASSERT_EQ(entries.elements.size(), times.size() + 1);
  for (std::size_t i = 0; i < times.size(); ++i) {
    std::map<std::string, std::string> f;
    const auto& kv = entries.elements[i + 1].elements.at(1).elements;
    for (std::size_t k = 0; k + 1 < kv.size(); k += 2) f[kv[k].text] = kv[k + 1].text;
    EXPECT_EQ(f["v"], "4");
    EXPECT_EQ(f["ts"], std::to_string(times[i].first));
    EXPECT_EQ(json::parse(f["io"]), stored_io);
  }

  // Decoded: times as strings with their ISO forms; fixed-width values as decimal
  // strings and NX bytes as hex, each under its own key; names with error states.
  const auto decoded = run_tgw("decode --names " + infra::to_hex(bytes));
  ASSERT_EQ(decoded.exit_code, 0) << decoded.out;
  const json decoded_frame = json_lines(decoded.out).at(0);
  ASSERT_EQ(decoded_frame["records"].size(), times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    const json& r = decoded_frame["records"][i];
    EXPECT_EQ(r["timestamp_ms"], std::to_string(times[i].first));
    EXPECT_EQ(r["timestamp"], times[i].second);
    const json& io = r["io"];
    ASSERT_EQ(io.size(), 6U);
    EXPECT_EQ(io[3]["value"], "9007199254740993");
    EXPECT_FALSE(io[3].contains("hex"));
    EXPECT_EQ(io[4]["hex"], "9007199254740993");
    EXPECT_FALSE(io[4].contains("value"));
    EXPECT_EQ(io[2]["named"], json::parse(R"({"error":"not_connected"})"));
    EXPECT_EQ(io[5]["named"], json::parse(R"({"hex":"1234"})"));
  }

  // Tailed: the format 2 entry first, then the format 4 ones; ts one type, time always.
  const auto tailed =
      run_tgw("telemetry tail --redis " + url + " --from start --count 5 --json --names");
  ASSERT_EQ(tailed.exit_code, 0) << tailed.out;
  const auto lines = json_lines(tailed.out);
  ASSERT_EQ(lines.size(), 5U) << tailed.out;
  EXPECT_EQ(lines[0]["v"], "2");
  EXPECT_EQ(lines[0]["ts"], "1700000000500");
  EXPECT_EQ(lines[0]["io"], format2_as_format3);
  EXPECT_EQ(lines[0]["io_named"], format2_named);
  for (std::size_t i = 0; i < times.size(); ++i) {
    const json& line = lines[i + 1];
    EXPECT_EQ(line["v"], "4");
    EXPECT_EQ(line["ts"], std::to_string(times[i].first));
    EXPECT_EQ(line["time"], times[i].second);
    EXPECT_EQ(line["io"], stored_io);
    EXPECT_EQ(line["io_named"], named_io);
  }
  const auto for_people =
      run_tgw("telemetry tail --redis " + url + " --from start --count 5 --names");
  ASSERT_EQ(for_people.exit_code, 0) << for_people.out;
  EXPECT_NE(
      for_people.out.find("dallas_temperature_1=error:not_connected, iccid1=9007199254740993, "
                          "iccid1=0x9007199254740993, external_voltage=0x1234}"),
      std::string::npos)
      << for_people.out;
  EXPECT_NE(for_people.out.find("+584556019-04-03T14:25:51.615Z"), std::string::npos);

  // Sunk: both formats into positions with io in the format 4 form; the records whose
  // time PostgreSQL's partitions cannot hold (past 9999) kept whole in
  // rejected_entries, every field as stored, with the reason.
  ASSERT_EQ(run_command(shell_line(sink_argv(pg, redis, {"--init"}))).exit_code, 0);
  const auto drained = run_command(shell_line(sink_argv(pg, redis, {"--until-drained"})));
  ASSERT_EQ(drained.exit_code, 0) << drained.out;
  EXPECT_EQ(pg.query("SELECT count(*) FROM positions"), "2");
  EXPECT_EQ(pg.query("SELECT io = '" + format2_as_format3.dump() + "'::jsonb, io_named = '" +
                     format2_named.dump() +
                     "'::jsonb FROM positions WHERE codec = '8E' AND "
                     "ts = to_timestamp(1700000000.5)"),
            "t|t");
  EXPECT_EQ(
      pg.query("SELECT io = '" + stored_io.dump() + "'::jsonb, io_named = '" + named_io.dump() +
               "'::jsonb FROM positions WHERE ts = to_timestamp(1700000000)"),
      "t|t");
  EXPECT_EQ(
      pg.query("SELECT fields->>'ts', reason, (fields->>'io')::jsonb = '" + stored_io.dump() +
               "'::jsonb FROM rejected_entries ORDER BY stream_id"),
      "9007199254740993|field ts 9007199254740993 is out of range [0, 253402300799999]|t\n"
      "9223372036854775808|field ts 9223372036854775808 is out of range [0, 253402300799999]|t\n"
      "18446744073709551615|field ts 18446744073709551615 is out of range [0, 253402300799999]|t");
}

// A signed element sent narrower than the IO dictionary has it: IO 72 (Dallas
// temperature 1, 4 bytes in the FMB table) as the 2 bytes FFF6 is -1.0 °C, not 6552.6.
// Format 4 records the wire's width, so every consumer reads it so and says that the
// width is not the dictionary's; IO 73 sent at the dictionary's width is not flagged.
TEST_F(StoredFormats, Format4ReadsASignedValueAtItsWireWidthInEveryConsumer) {
  codecs::avl_record_data r;
  r.timestamp_ms = 1'700'000'000'000;
  r.io = {{72, 2, 0xFFF6, {}}, {73, 4, 0xFFFFFFF6, {}}};
  std::vector<std::uint8_t> bytes;
  const std::vector<codecs::avl_record_data> records = {r};
  ASSERT_EQ(codecs::encode_avl_frame(codecs::codec_id::codec8, records, bytes), codecs::errc::ok);
  deliver(bytes, 1);
  if (HasFatalFailure()) return;
  const json named = json::parse(R"({"dallas_temperature_1":-1.0,"dallas_temperature_2":-1.0})");
  const json mismatch = json::parse(R"([{"id":72,"size":2,"dictionary_size":4}])");

  const auto entries = conn.command({"XRANGE", "telemetry:records", "-", "+"});
  ASSERT_EQ(entries.elements.size(), 1U);
  std::map<std::string, std::string> f;
  const auto& kv = entries.elements[0].elements.at(1).elements;
  for (std::size_t k = 0; k + 1 < kv.size(); k += 2) f[kv[k].text] = kv[k + 1].text;
  EXPECT_EQ(f["v"], "4");
  EXPECT_EQ(f["io"], R"([[72,"65526",2],[73,"4294967286",4]])");

  const auto decoded = run_tgw("decode --names " + infra::to_hex(bytes));
  ASSERT_EQ(decoded.exit_code, 0) << decoded.out;
  const json io = json_lines(decoded.out).at(0)["records"][0]["io"];
  EXPECT_EQ(io[0]["named"], -1.0);
  EXPECT_EQ(io[0]["dictionary_size"], 4);
  EXPECT_EQ(io[1]["named"], -1.0);
  EXPECT_FALSE(io[1].contains("dictionary_size"));

  const auto tailed = run_tgw("telemetry tail --redis " + url +
                              " --from start --count 1 --json "
                              "--names");
  ASSERT_EQ(tailed.exit_code, 0) << tailed.out;
  const json line = json_lines(tailed.out).at(0);
  EXPECT_EQ(line["io_named"], named);
  EXPECT_EQ(line["io_size_mismatch"], mismatch);

  ASSERT_EQ(run_command(shell_line(sink_argv(pg, redis, {"--init"}))).exit_code, 0);
  const auto drained = run_command(shell_line(sink_argv(pg, redis, {"--until-drained"})));
  ASSERT_EQ(drained.exit_code, 0) << drained.out;
  EXPECT_EQ(pg.query("SELECT io_named = '" + named.dump() + "'::jsonb FROM positions"), "t");
  EXPECT_NE(drained.out.find("IO element 72 came 2 bytes wide, the IO dictionary says 4"),
            std::string::npos)
      << drained.out;
  EXPECT_EQ(drained.out.find("IO element 73"), std::string::npos) << drained.out;
}

}  // namespace
}  // namespace tgw::test
