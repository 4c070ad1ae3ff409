// A real `tgw serve --capture-dir` against a real redis-server: the events the live
// gateway journaled for some device traffic equal what `tgw replay --offline` makes of
// the recording of that traffic, and `tgw replay --to` re-enacts it against a fresh
// gateway with the same answers.
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <future>
#include <map>
#include <sstream>

#include "codecs/command.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/replay_scenarios.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

namespace sc = scenarios;
using event_fields = std::vector<std::pair<std::string, std::string>>;

class ReplayGateway : public ::testing::Test {
 protected:
  void start(const std::string& capture_dir) {
    port = free_port();
    std::vector<std::string> argv = {
        TGW_BINARY,       "serve",
        "--port",         std::to_string(port),
        "--bind",         "127.0.0.1",
        "--redis",        "redis://127.0.0.1:" + std::to_string(server.port()),
        "--metrics-addr", "",
        "--instance-id",  "gw-replay",
        "--log-level",    "warn"};
    if (!capture_dir.empty()) {
      argv.push_back("--capture-dir");
      argv.push_back(capture_dir);
    }
    gateway.emplace(argv, ::testing::TempDir() + "/replay_gateway.log");
    ASSERT_TRUE(eventually([&] { return device(port).connected(); }));
  }
  void stop() {
    gateway->signal(SIGTERM);
    EXPECT_EQ(gateway->wait(), 0);
    gateway.reset();
  }
  // XRANGE journal:{imei}, at_ms and instance left out.
  std::vector<event_fields> journal(const std::string& imei) {
    std::vector<event_fields> out;
    for (const auto& e : redis.command({"XRANGE", "journal:" + imei, "-", "+"}).elements) {
      event_fields f;
      const auto& kv = e.elements[1].elements;
      for (std::size_t i = 0; i + 1 < kv.size(); i += 2)
        if (kv[i].text != "at_ms" && kv[i].text != "instance")
          f.emplace_back(kv[i].text, kv[i + 1].text);
      out.push_back(std::move(f));
    }
    return out;
  }

  redis_server server;
  infra::redis::connection redis = server.connect();
  std::uint16_t port = 0;
  std::optional<child_process> gateway;
};

std::vector<std::string> capture_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(ReplayGateway, OfflineReplayOfARecordingEqualsTheLiveJournal) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "replay_gateway_capture";
  std::filesystem::remove_all(dir);
  start(dir.string());
  const char* a_imei = "356307042441013";
  const char* b_imei = "356307042441021";
  {
    device a(port);
    device b(port);
    a.send(sc::handshake(a_imei));
    ASSERT_EQ(a.receive(1), bytes{0x01});
    b.send(sc::handshake(b_imei));
    ASSERT_EQ(b.receive(1), bytes{0x01});
    const bytes p = sc::avl(codecs::codec_id::codec8e, 3, 1'699'999'000'000);
    // Split across writes, as a device on a slow link would.
    a.send(bytes(p.begin(), p.begin() + 20));
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
    a.send(bytes(p.begin() + 20, p.end()));
    ASSERT_EQ(a.receive(4), sc::ack(3));
    a.send(p);  // resent after a "lost" ACK
    ASSERT_EQ(a.receive(4), sc::ack(3));
    b.send(sc::avl(codecs::codec_id::codec8, 1, 1'699'999'100'000, true));
    b.send(sc::avl(codecs::codec_id::codec8, 2, 1'699'999'200'000));
    ASSERT_EQ(b.receive(4), sc::ack(2));
    a.send({0xFF});
  }
  ASSERT_TRUE(eventually([&] {
    return journal(a_imei).size() == 4 && journal(b_imei).size() == 4;
  })) << journal(a_imei).size()
      << " " << journal(b_imei).size();
  stop();

  const auto files = capture_files(dir);
  ASSERT_FALSE(files.empty());
  std::string args = "--offline";
  for (const auto& f : files) args += " " + f;
  const auto err_path = std::filesystem::path(::testing::TempDir()) / "replay_gateway_err.txt";
  // A stream, not a chain of `+`: GCC 12 at -O3 reports a false overflow in the chain.
  std::ostringstream command;
  command << "(" << TGW_BINARY << " replay " << args << " 2>" << err_path.string() << ")";
  const auto r = run_command(command.str());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, std::vector<event_fields>> offline;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::ordered_json::parse(line);
    event_fields f;
    for (const auto& [k, v] : j.items())
      if (k != "t_ms" && k != "imei") f.emplace_back(k, v.get<std::string>());
    offline[j["imei"].get<std::string>()].push_back(std::move(f));
  }
  for (const char* imei : {a_imei, b_imei}) {
    const auto live = journal(imei);
    ASSERT_EQ(offline[imei].size(), live.size()) << imei;
    for (std::size_t i = 0; i < live.size(); ++i) EXPECT_EQ(offline[imei][i], live[i]) << imei;
  }

  // The same devices against a fresh gateway and an empty Redis: the same answers.
  redis.command({"FLUSHALL"});
  start("");
  std::string live_args = "--to 127.0.0.1:" + std::to_string(port) +
                          " --speed 0 --redis redis://127.0.0.1:" + std::to_string(server.port());
  for (const auto& f : files) live_args += " " + f;
  const auto live = run_tgw("replay " + live_args);
  EXPECT_EQ(live.exit_code, 0) << live.out;
  // Three connections: the two devices and the readiness probe of start().
  EXPECT_NE(live.out.find("3 as recorded, 0 differing, 0 capture errors"), std::string::npos)
      << live.out;
  stop();
}

/// Reads the command the gateway wrote to `d` and answers it "OK <text>".
bool answer_command(const device& d) {
  const auto text = receive_command(d);
  return text && answer_command(d, "OK " + *text);
}

// A recording that holds an operator's command replays as recorded, offline and live
// (the command is not the device's doing, so it is not replayed); replaying it into the
// gateway that recorded it is refused, since the gateway recognises only a device's
// last packet as a resend and would store the others again.
TEST_F(ReplayGateway, ACaptureWithACommandReplaysAndTheRecordingGatewayIsRefused) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "replay_command_capture";
  std::filesystem::remove_all(dir);
  start(dir.string());
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port());
  const char* imei = "356307042441013";
  {
    device a(port);
    a.send(sc::handshake(imei));
    ASSERT_EQ(a.receive(1), bytes{0x01});
    for (std::uint64_t i = 0; i < 3; ++i) {
      a.send(sc::avl(codecs::codec_id::codec8e, 2, 1'699'999'000'000 + i * 10'000));
      ASSERT_EQ(a.receive(4), sc::ack(2));
    }
    ASSERT_TRUE(eventually([&] {
      return redis.command({"HGET", "connections:registry", imei}).text == "gw-replay";
    }));
    auto sent = std::async(std::launch::async, [&] {
      return run_tgw("command send --redis " + url + " --imei " + imei + " --text getinfo");
    });
    EXPECT_TRUE(answer_command(a));
    EXPECT_EQ(sent.get().exit_code, 0);
    a.send(sc::avl(codecs::codec_id::codec8e, 1, 1'699'999'100'000));
    ASSERT_EQ(a.receive(4), sc::ack(1));
  }
  ASSERT_TRUE(eventually([&] { return journal(imei).size() >= 7; }));
  stop();
  std::string files;
  for (const auto& f : capture_files(dir)) files += " " + f;

  const auto offline = run_tgw("replay --offline" + files);
  EXPECT_EQ(offline.exit_code, 0) << offline.out;
  EXPECT_NE(offline.out.find("command(s) came from an operator and are not replayed"),
            std::string::npos)
      << offline.out;

  // Into the gateway (and Redis) that recorded it: refused, nothing stored again.
  start("");
  const auto stored = redis.command({"XLEN", "telemetry:records"}).integer;
  const std::string to = "replay --to 127.0.0.1:" + std::to_string(port) + " --speed 0";
  const auto refused = run_tgw(to + " --redis " + url + files);
  EXPECT_EQ(refused.exit_code, 3) << refused.out;
  EXPECT_NE(refused.out.find("already holds 1 of the capture's 1 devices"), std::string::npos)
      << refused.out;
  EXPECT_EQ(redis.command({"XLEN", "telemetry:records"}).integer, stored);

  // Into a fresh one: as recorded, the command included.
  redis.command({"FLUSHALL"});
  const auto fresh = run_tgw(to + " --redis " + url + files);
  EXPECT_EQ(fresh.exit_code, 0) << fresh.out;
  EXPECT_NE(fresh.out.find("0 differing, 0 capture errors"), std::string::npos) << fresh.out;
  EXPECT_EQ(redis.command({"XLEN", "telemetry:records"}).integer, stored);
  stop();
}

}  // namespace
}  // namespace tgw::test
