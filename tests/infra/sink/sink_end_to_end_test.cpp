// Teltonika's own example frames through a real `tgw serve`, the telemetry stream and
// `tgw sink postgres`: every column in PostgreSQL equals what `tgw decode` reads from
// the frame the device sent.
#include <signal.h>

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "infra/text/hex.hpp"
#include "tests/infra/sink/sink_test_support.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// The TCP AVL frames of the official examples whose CRC is right, in file order.
std::vector<std::string> official_avl_frames() {
  std::ifstream in(std::string(TGW_SOURCE_DIR) + "/tests/data/teltonika_official.json");
  const json vectors = json::parse(in);
  std::vector<std::string> frames;
  for (const json& v : vectors) {
    const std::string codec = v.value("codec", "");
    if (v.value("transport", "") != "tcp" || v.value("direction", "") != "device->server") continue;
    if (codec != "0x08" && codec != "0x8E" && codec != "0x10") continue;
    if (!v["verification"].value("crc_ok", false)) continue;
    frames.push_back(v["hex"].get<std::string>());
  }
  return frames;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(SinkEndToEnd, RecordsInPostgresEqualTgwDecodeOfTheFramesSent) {
  postgres_server pg;
  redis_server redis;
  const std::uint16_t port = free_port();
  char tmpl[] = "/tmp/tgw-sink-e2e-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  child_process serve({TGW_BINARY, "serve", "--port", std::to_string(port), "--bind", "127.0.0.1",
                       "--metrics-addr", "", "--redis", redis.url()},
                      dir + "/serve.log");
  ASSERT_TRUE(eventually([&] { return device(port).connected(); }, 20s));

  const auto frames = official_avl_frames();
  ASSERT_GE(frames.size(), 7u);
  // What tgw decode reads from each frame, record by record.
  std::vector<std::pair<std::string, json>> expected;  // codec, record
  for (const std::string& hex : frames) {
    const auto decoded = run_tgw("decode --names " + hex);
    ASSERT_EQ(decoded.exit_code, 0) << decoded.out;
    const json frame = json::parse(decoded.out.substr(0, decoded.out.find('\n')));
    ASSERT_EQ(frame["kind"], "avl") << decoded.out;
    for (const json& r : frame["records"]) expected.emplace_back(frame["codec"], r);
  }

  device d(port);
  ASSERT_TRUE(d.connected());
  d.send(handshake_packet("356307042441013"));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  for (const std::string& hex : frames) {
    d.send(infra::parse_hex(hex).value());
    ASSERT_TRUE(d.receive(4)) << "no ACK for " << hex;
  }

  ASSERT_EQ(run_command(shell_line(sink_argv(pg, redis, {"--init"}))).exit_code, 0);
  const auto drained = run_command(shell_line(sink_argv(pg, redis, {"--until-drained"})));
  ASSERT_EQ(drained.exit_code, 0) << drained.out;

  const std::string rows_text = pg.query(
      "SELECT json_build_object('imei', imei, 'ts', (extract(epoch FROM ts) * 1000)::bigint, "
      "'codec', codec, 'priority', priority, 'latitude', latitude, 'longitude', longitude, "
      "'altitude', altitude, 'angle', angle, 'satellites', satellites, 'speed', speed, "
      "'event_io', event_io, 'generation', generation, 'io', io, 'io_named', io_named) FROM "
      "positions ORDER BY split_part(stream_id, '-', 1)::bigint, split_part(stream_id, '-', "
      "2)::bigint");
  std::vector<json> rows;
  std::istringstream lines(rows_text);
  for (std::string line; std::getline(lines, line);) rows.push_back(json::parse(line));
  ASSERT_EQ(rows.size(), expected.size()) << rows_text;

  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    const auto& [codec, r] = expected[i];
    SCOPED_TRACE("record " + std::to_string(i) + ": " + r.dump());
    EXPECT_EQ(row["imei"], "356307042441013");
    EXPECT_EQ(row["codec"], codec);
    EXPECT_EQ(std::to_string(row["ts"].get<std::int64_t>()), r["timestamp_ms"]);
    EXPECT_EQ(row["priority"], r["priority"]);
    EXPECT_EQ(row["latitude"].get<double>(), r["latitude"].get<double>());
    EXPECT_EQ(row["longitude"].get<double>(), r["longitude"].get<double>());
    EXPECT_EQ(row["altitude"], r["altitude"]);
    EXPECT_EQ(row["angle"], r["angle"]);
    EXPECT_EQ(row["satellites"], r["satellites"]);
    EXPECT_EQ(row["speed"], r["speed"]);
    EXPECT_EQ(row["event_io"], r["event_io_id"]);
    if (codec == "16")
      EXPECT_EQ(row["generation"], r["generation_type"]);
    else
      EXPECT_TRUE(row["generation"].is_null());
    // io holds the record's elements in wire order, each of its kind: a fixed-width
    // value as the decimal string decode prints, NX bytes as {"hex":...}.
    ASSERT_EQ(row["io"].size(), r["io"].size());
    for (std::size_t k = 0; k < r["io"].size(); ++k) {
      const json& e = r["io"][k];
      const json& stored = row["io"][k];
      const std::string id = std::to_string(e["id"].get<int>());
      EXPECT_EQ(stored[0], e["id"]) << id;
      if (e.contains("hex"))
        EXPECT_EQ(lower(stored[1]["hex"].get<std::string>()), lower(e["hex"].get<std::string>()))
            << id;
      else
        EXPECT_EQ(stored[1], e["value"]) << id;
      // io_named holds what decode --names calls "named", for each id it names (the
      // frames repeat no id).
      if (e.contains("name")) {
        const json& named = row["io_named"][e["name"].get<std::string>()];
        if (e["named"].is_number_float())
          EXPECT_DOUBLE_EQ(named.get<double>(), e["named"].get<double>()) << id;
        else
          EXPECT_EQ(named, e["named"]) << id;
      }
    }
  }
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// Redis memory is the back-pressure: full, the gateway stops ACKing; the sink drains
// the stream into PostgreSQL, retention trims what it acknowledged, and the device's
// resent packet is ACKed. Every ACKed record ends up in positions once.
TEST(SinkEndToEnd, WithRedisFullTheGatewayStopsAckingUntilTheSinkDrains) {
  postgres_server pg;
  redis_server redis;
  auto conn = redis.connect();
  char tmpl[] = "/tmp/tgw-sink-full-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(run_command(shell_line(sink_argv(pg, redis, {"--init"}))).exit_code, 0);
  conn.command({"XGROUP", "CREATE", "telemetry:records", "positions", "0", "MKSTREAM"});
  const std::uint16_t port = free_port();
  child_process serve(
      {TGW_BINARY, "serve", "--port", std::to_string(port), "--bind", "127.0.0.1", "--metrics-addr",
       "", "--redis", redis.url(), "--telemetry-retention-interval-ms", "200"},
      dir + "/serve.log");
  ASSERT_TRUE(eventually([&] { return device(port).connected(); }, 20s));
  device d(port);
  d.send(handshake_packet("356307042441013"));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  const auto info = conn.command({"INFO", "memory"}).text;
  const long used = std::atol(info.c_str() + info.find("used_memory:") + 12);
  conn.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  conn.command({"CONFIG", "SET", "maxmemory", std::to_string(used + 400 * 1024)});

  const bytes ack25{0, 0, 0, 25};
  std::uint64_t t = 1'700'000'000'000;
  long acked = 0;
  bytes refused;
  for (int i = 0; i < 2000 && refused.empty(); ++i, t += 100'000) {
    const bytes p = codec8e_packet(25, t);
    d.send(p);
    if (d.receive(4) == ack25)
      acked += 25;
    else
      refused = p;
  }
  ASSERT_FALSE(refused.empty()) << "Redis never ran out of memory";
  EXPECT_EQ(pg.query("SELECT count(*) FROM positions"), "0");

  child_process sink(sink_argv(pg, redis, {"--batch", "500"}), dir + "/sink.log");
  EXPECT_TRUE(eventually(
      [&] {
        d.send(refused);
        return d.receive(4) == ack25;
      },
      60s));
  acked += 25;
  EXPECT_TRUE(eventually(
      [&] { return std::stol(pg.query("SELECT count(*) FROM positions")) >= acked; }, 30s));
  EXPECT_EQ(std::stol(pg.query("SELECT count(*) FROM positions")), acked);
  EXPECT_EQ(std::stol(pg.query("SELECT count(DISTINCT ts) FROM positions")), acked);
  sink.signal(SIGTERM);
  EXPECT_EQ(sink.wait(), 0);
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
  std::error_code ec;
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace tgw::test
