// A real `tgw serve --capture-dir` against a real redis-server: the events the live
// gateway journaled for some device traffic equal what `tgw replay --offline` makes of
// the recording of that traffic, and `tgw replay --to` re-enacts it against a fresh
// gateway with the same answers.
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <sstream>

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
  std::string live_args = "--to 127.0.0.1:" + std::to_string(port) + " --speed 0";
  for (const auto& f : files) live_args += " " + f;
  const auto live = run_tgw("replay " + live_args);
  EXPECT_EQ(live.exit_code, 0) << live.out;
  // Three connections: the two devices and the readiness probe of start().
  EXPECT_NE(live.out.find("3 as recorded, 0 differing, 0 capture errors"), std::string::npos)
      << live.out;
  stop();
}

}  // namespace
}  // namespace tgw::test
