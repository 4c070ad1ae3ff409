// `tgw devices` against real gateways: two `tgw serve` instances on a real redis-server
// (or, in actors_cluster_test, on the 3+3 Redis Cluster of redis_backend, where the
// devices' keys fall in several key shards), devices as raw sockets that send packets
// of known positions, and the `tgw` binary reading them back. Waits poll up to a
// deadline; nothing asserts on how long anything took.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "codecs/avl_encode.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/gateway_process.hpp"
#include "tests/support/run_tgw.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

/// What a device sent last: the newest record's time and position.
struct sent_position {
  std::uint64_t ts = 0;
  std::int32_t lat = 0;
  std::int32_t lon = 0;
  std::uint16_t speed = 0;
  std::uint8_t satellites = 0;
};

/// A device on a gateway's port that sends packets of `n` records, the last (newest)
/// at `p`'s time and position, the others a second apart before it.
class tracker {
 public:
  tracker(std::uint16_t port, std::string imei) : socket_(port), imei_(std::move(imei)) {
    socket_.send(handshake_packet(imei_));
    accepted_ = socket_.receive(1) == bytes{0x01};
  }
  [[nodiscard]] bool accepted() const { return accepted_; }
  bool send(int n, const sent_position& p) {
    std::vector<codecs::avl_record_data> records;
    for (int i = n - 1; i >= 0; --i) {
      codecs::avl_record_data r;
      r.timestamp_ms = p.ts - static_cast<std::uint64_t>(i) * 1000;
      r.priority = 1;
      r.latitude = p.lat - i;
      r.longitude = p.lon - i;
      r.satellites = p.satellites;
      r.speed = p.speed;
      records.push_back(r);
    }
    bytes frame;
    if (codecs::encode_avl_frame(codecs::codec_id::codec8, records, frame) != codecs::errc::ok)
      return false;
    socket_.send(frame);
    const bytes ack = {0, 0, 0, static_cast<std::uint8_t>(n)};
    return socket_.receive(4) == ack;
  }

 private:
  device socket_;
  std::string imei_;
  bool accepted_ = false;
};

class Devices : public ::testing::Test {
 protected:
  void SetUp() override {
    // One after the other: on a cluster the first stores the key shard count.
    a = start_gateway(backend, "gw-devices-a");
    ASSERT_NE(a.port, 0) << "gateway a did not start";
    b = start_gateway(backend, "gw-devices-b");
    ASSERT_NE(b.port, 0) << "gateway b did not start";
  }

  run_result devices(const std::string& args) {
    return run_tgw("devices --redis " + backend.url() + " " + args);
  }
  json devices_json(const std::string& args = {}) {
    const run_result r = devices("--json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out, nullptr, false);
  }
  /// The listed devices by IMEI.
  std::map<std::string, json> listed(const std::string& args = {}) {
    std::map<std::string, json> out;
    const json j = devices_json(args);
    if (!j.is_object()) return out;
    for (const json& d : j["devices"]) out[d["imei"].get<std::string>()] = d;
    return out;
  }
  std::int64_t redis_now() {
    const auto t = redis.command({"TIME"});
    return *t.elements.at(0).as_int() * 1000 + *t.elements.at(1).as_int() / 1000;
  }

  redis_backend backend;
  infra::redis::connection redis = backend.connect();
  gateway_process a;
  gateway_process b;
};

constexpr std::uint64_t t0 = 1'700'000'000'000;

/// The words of the line of `text` that starts with `first`.
std::vector<std::string> words_of_line(const std::string& text, const std::string& first) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(first)) continue;
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
  }
  return {};
}

TEST_F(Devices, EachColumnIsWhatTheDevicesSent) {
  const std::int64_t before = redis_now();
  // The first device connects twice: what it sent before its current connection counts
  // in the total only.
  {
    tracker earlier(a.port, "356307042441013");
    ASSERT_TRUE(earlier.accepted());
    ASSERT_TRUE(earlier.send(2, {t0, 546992512, 252616688, 30, 9}));
  }
  ASSERT_TRUE(eventually([&] { return !listed().contains("356307042441013"); }));
  const std::int64_t reconnect = redis_now();
  tracker one(a.port, "356307042441013");
  tracker two(a.port, "356307042441021");
  tracker three(b.port, "356307042441039");
  ASSERT_TRUE(one.accepted() && two.accepted() && three.accepted());
  const std::map<std::string, std::pair<int, sent_position>> sent = {
      {"356307042441013", {3, {t0 + 60'000, 546992600, 252616700, 41, 12}}},
      {"356307042441021", {1, {t0 + 61'000, -339249100, 184241200, 0, 4}}},
      {"356307042441039", {5, {t0 + 62'000, 407127700, -740059700, 118, 17}}}};
  ASSERT_TRUE(one.send(3, sent.at("356307042441013").second));
  ASSERT_TRUE(two.send(1, sent.at("356307042441021").second));
  ASSERT_TRUE(three.send(5, sent.at("356307042441039").second));
  const std::int64_t after = redis_now();

  // On the cluster the three are in three key shards, one on each master.
  std::set<std::string> shards;
  for (const auto& [imei, unused] : sent) shards.insert(backend.prefix(imei));
  EXPECT_EQ(shards.size(), backend.on_cluster() ? 3U : 1U);

  const auto got = listed();
  ASSERT_EQ(got.size(), 3U);
  for (const auto& [imei, what] : sent) {
    SCOPED_TRACE(imei);
    const auto& [records, p] = what;
    const json& d = got.at(imei);
    EXPECT_EQ(d["instance"], imei == "356307042441039" ? b.instance : a.instance);
    EXPECT_EQ(d["instance_alive"], true);
    EXPECT_EQ(d["online"], true);
    EXPECT_GE(d["connected_ms"].get<std::int64_t>(), reconnect);
    EXPECT_LE(d["connected_ms"].get<std::int64_t>(), d["last_seen_ms"].get<std::int64_t>());
    EXPECT_LE(d["last_seen_ms"].get<std::int64_t>(), after);
    EXPECT_EQ(d["position"]["ts_ms"], std::to_string(p.ts));
    EXPECT_DOUBLE_EQ(d["position"]["lat"].get<double>(), p.lat / 1e7);
    EXPECT_DOUBLE_EQ(d["position"]["lon"].get<double>(), p.lon / 1e7);
    EXPECT_EQ(d["position"]["speed"], p.speed);
    EXPECT_EQ(d["position"]["satellites"], p.satellites);
    EXPECT_EQ(d["records_since_connect"], records);
    EXPECT_EQ(d["records_total"], imei == "356307042441013" ? records + 2 : records);
  }
  EXPECT_GE(got.at("356307042441013")["connected_ms"].get<std::int64_t>(), before);

  // The same for people: one row each, times relative, degrees and units.
  const run_result table = devices("");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("3 devices connected, on 2 instances"), std::string::npos) << table.out;
  const std::map<std::string, std::vector<std::string>> rows = {
      {"356307042441013", {"54.6992600", "25.2616700", "41", "km/h", "12", "3"}},
      {"356307042441021", {"-33.9249100", "18.4241200", "0", "km/h", "4", "1"}},
      {"356307042441039", {"40.7127700", "-74.0059700", "118", "km/h", "17", "5"}}};
  for (const auto& [imei, tail] : rows) {
    const std::vector<std::string> row = words_of_line(table.out, imei);
    ASSERT_GT(row.size(), tail.size() + 2) << table.out;
    EXPECT_EQ(row[1], imei == "356307042441039" ? b.instance : a.instance);
    EXPECT_EQ(
        std::vector<std::string>(row.end() - static_cast<std::ptrdiff_t>(tail.size()), row.end()),
        tail)
        << table.out;
  }
  // Connected and last packet as ages ("just now", "3 s ago"), never raw milliseconds.
  EXPECT_TRUE(table.out.find("just now") != std::string::npos ||
              table.out.find(" s ago") != std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("1700000060000"), std::string::npos) << "a raw time: " << table.out;

  // --instance keeps one instance's devices.
  const auto of_b = listed("--instance " + b.instance);
  EXPECT_EQ(of_b.size(), 1U);
  EXPECT_TRUE(of_b.contains("356307042441039"));
  EXPECT_TRUE(listed("--instance gw-nobody").empty());
}

TEST_F(Devices, SilentForFindsADeviceThatConnectedAndWentQuiet) {
  tracker quiet(b.port, "356307042441047");
  tracker busy(a.port, "356307042441054");
  ASSERT_TRUE(quiet.accepted() && busy.accepted());
  ASSERT_TRUE(quiet.send(1, {t0, 546992512, 252616688, 10, 8}));
  // Until the quiet one has been silent for 3 s the busy one keeps sending; then the
  // busy one sends once more and only the quiet one is silent that long.
  std::uint64_t ts = t0;
  ASSERT_TRUE(eventually(
      [&] {
        EXPECT_TRUE(busy.send(1, {ts += 1000, 546992512, 252616688, 50, 9}));
        return listed("--silent-for 3s").contains("356307042441047");
      },
      30s));
  ASSERT_TRUE(busy.send(1, {ts += 1000, 546992512, 252616688, 50, 9}));
  const auto silent = listed("--silent-for 3s");
  EXPECT_EQ(silent.size(), 1U);
  EXPECT_TRUE(silent.contains("356307042441047"));
  // Both are connected.
  EXPECT_EQ(listed().size(), 2U);
  const run_result table = devices("--silent-for 3s");
  EXPECT_NE(table.out.find("1 of 2 connected devices match"), std::string::npos) << table.out;
}

TEST_F(Devices, OneDeviceInFullWithItsJournalAndOpenCommands) {
  tracker one(a.port, "356307042441013");
  ASSERT_TRUE(one.accepted());
  ASSERT_TRUE(one.send(2, {t0, 546992600, 252616700, 41, 12}));
  // A device that is offline, with a command queued for it.
  const run_result queued =
      run_tgw("command send --redis " + backend.url() +
              " --imei 356307042441021 --text 'setdigout 1' --queue-if-offline --publisher ops");
  ASSERT_EQ(queued.exit_code, 3) << queued.out;

  const json full = devices_json("--imei 356307042441013 --events 2");
  ASSERT_TRUE(full.is_object());
  EXPECT_EQ(full["instance"], a.instance);
  EXPECT_EQ(full["projection"]["satellites"], "12");
  EXPECT_EQ(full["projection"]["records_total"], "2");
  ASSERT_EQ(full["journal"].size(), 2U);
  EXPECT_EQ(full["journal"][0]["type"], "identified");
  EXPECT_EQ(full["journal"][1]["type"], "records_accepted");
  EXPECT_TRUE(full["open_commands"].empty());

  const json offline = devices_json("--imei 356307042441021");
  ASSERT_TRUE(offline.is_object());
  EXPECT_EQ(offline["instance"], nullptr);
  ASSERT_EQ(offline["open_commands"].size(), 1U);
  EXPECT_EQ(offline["open_commands"][0]["status"], "queued");
  EXPECT_EQ(offline["open_commands"][0]["text"], "setdigout 1");
  EXPECT_EQ(offline["open_commands"][0]["publisher"], "ops");

  const run_result text = devices("--imei 356307042441021");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("not registered"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("queued  \"setdigout 1\"  ops"), std::string::npos) << text.out;

  const run_result unknown = devices("--imei 356307042441062");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.out;
  EXPECT_NE(unknown.out.find("nothing is known of device 356307042441062"), std::string::npos)
      << unknown.out;
}

// A device clock may stamp any 64-bit time. 2^53 + 1 is the first a double cannot hold
// (JavaScript would read 2^53), 2^63 the first past a signed 64-bit integer (which read
// as 0, 1970): both come back exactly, as strings with their ISO 8601 form.
TEST_F(Devices, RecordTimesPastWhatADoubleHoldsStayExact) {
  struct frame {
    std::uint64_t ts;
    const char* digits;
    const char* time;
  };
  const frame frames[] = {
      {(std::uint64_t{1} << 53) + 1, "9007199254740993", "+287396-10-12T08:59:00.993Z"},
      {std::uint64_t{1} << 63, "9223372036854775808", "+292278994-08-17T07:12:55.808Z"}};
  tracker device(a.port, "356307042441013");
  ASSERT_TRUE(device.accepted());
  for (const frame& f : frames) {
    SCOPED_TRACE(f.digits);
    ASSERT_TRUE(device.send(1, {f.ts, 546992600, 252616700, 41, 12}));
    const auto got = listed();
    ASSERT_TRUE(got.contains("356307042441013"));
    const json& position = got.at("356307042441013")["position"];
    EXPECT_EQ(position["ts_ms"], f.digits);
    EXPECT_EQ(position["time"], f.time);

    const json full = devices_json("--imei 356307042441013");
    ASSERT_TRUE(full.is_object());
    EXPECT_EQ(full["position"]["ts_ms"], f.digits);
    EXPECT_EQ(full["projection"]["last_ts"], f.digits);

    const run_result text = devices("--imei 356307042441013");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    const auto line = words_of_line(text.out, "  position time");
    ASSERT_GE(line.size(), 3U) << text.out;
    EXPECT_EQ(line[2], f.time) << text.out;
    EXPECT_EQ(text.out.find("1970-"), std::string::npos) << text.out;
  }
}

TEST_F(Devices, BadFiltersAreUsageErrors) {
  for (const char* args :
       {"--imei 12345", "--imei 35630704244101x", "--silent-for soon", "--silent-for -5s",
        "--instance ''", "--imei 356307042441013 --instance gw-devices-a",
        "--imei 356307042441013 --silent-for 1m", "--events 0"}) {
    const run_result r = devices(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_FALSE(r.out.empty()) << args;
  }
}

}  // namespace
}  // namespace tgw::test
