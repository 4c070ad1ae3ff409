// The client subcommands as a newcomer runs them: with no --redis they find the
// private Redis of a `tgw serve` started with defaults in the same directory, and when
// there is none the error says where they looked and which --redis to pass; their exit
// codes say what happened. Real processes; waits poll up to a deadline.
#include <signal.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "infra/commands/command_publisher.hpp"
#include "infra/commands/redis_command_store.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

/// A fresh directory for one test, as a newcomer's working directory.
std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/clients-" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// `tgw ARGS` run from `dir`.
run_result tgw_in(const std::string& dir, const std::string& args) {
  return run_command("cd '" + dir + "' && " + TGW_BINARY + " " + args);
}

/// Nothing on 127.0.0.1:6379 may answer for the "nothing found" cases to mean anything.
bool default_port_free() {
  infra::redis::endpoint local;
  infra::redis::connection probe({local, 300ms, 300ms, ""});
  return probe.command({"PING"}).is_error();
}

TEST(ClientCommands, FindThePrivateRedisOfAServeInTheSameDirectory) {
  const std::string dir = fresh_dir("private");
  const std::uint16_t port = free_port();
  child_process serve({"sh", "-c",
                       "cd '" + dir + "' && exec " + TGW_BINARY + " serve --port " +
                           std::to_string(port) + " --bind 127.0.0.1 --metrics-addr ''"},
                      dir + "/serve.log");
  ASSERT_TRUE(eventually([&] { return device(port).connected(); }, 20s));
  const run_result registry = tgw_in(dir, "registry --json");
  EXPECT_EQ(registry.exit_code, 0) << registry.out;
  EXPECT_NE(registry.out.find("\"instances\""), std::string::npos) << registry.out;
  const run_result check = tgw_in(dir, "projections rebuild --dry-run");
  EXPECT_EQ(check.exit_code, 0) << check.out;
  // The same from elsewhere, by --data-dir, and by a relative unix:// URL.
  EXPECT_EQ(run_tgw("registry --json --data-dir '" + dir + "/tgw-data'").exit_code, 0);
  EXPECT_EQ(tgw_in(dir, "registry --json --redis unix://tgw-data/redis.sock").exit_code, 0);
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(), 0);
}

TEST(ClientCommands, WithNoRedisAnywhereTheErrorGivesTheUrlToPass) {
  if (!default_port_free()) GTEST_SKIP() << "something answers on 127.0.0.1:6379";
  const std::string dir = fresh_dir("nothing");
  const std::string socket = std::filesystem::canonical(dir).string() + "/tgw-data/redis.sock";
  for (const char* args : {"registry", "projections rebuild --dry-run",
                           "command send --imei 356307042441013 --text getinfo"}) {
    const run_result r = tgw_in(dir, args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.out;
    EXPECT_NE(r.out.find("no Redis found"), std::string::npos) << args << ": " << r.out;
    EXPECT_NE(r.out.find("--redis unix://" + socket), std::string::npos) << args << ": " << r.out;
  }
}

TEST(ClientCommands, ExitCodesSayWhatHappened) {
  redis_server server;
  const std::string url = "--redis redis://127.0.0.1:" + std::to_string(server.port());
  // Not an IMEI: a usage error, not "owner: null".
  const run_result bad_imei = run_tgw("registry --imei abc " + url);
  EXPECT_EQ(bad_imei.exit_code, 2) << bad_imei.out;
  EXPECT_NE(bad_imei.out.find("--imei"), std::string::npos) << bad_imei.out;
  // A dry run is a check: 0 when the projections match the journals, 3 when not.
  auto redis = server.connect();
  EXPECT_EQ(run_tgw("projections rebuild --dry-run " + url).exit_code, 0);
  redis.command({"XADD", "journal:356307042441013", "*", "type", "identified", "at_ms", "1000",
                 "instance", "gw", "peer", "127.0.0.1:1", "transport", "tcp"});
  const run_result differs = run_tgw("projections rebuild --dry-run " + url);
  EXPECT_EQ(differs.exit_code, 3) << differs.out;
  EXPECT_EQ(run_tgw("projections rebuild " + url).exit_code, 0);
  EXPECT_EQ(run_tgw("projections rebuild --dry-run " + url).exit_code, 0);
  // A URL that does not parse is a usage error everywhere.
  EXPECT_EQ(run_tgw("registry --redis http://x").exit_code, 2);
  EXPECT_EQ(run_tgw("projections rebuild --redis http://x").exit_code, 2);
}

// Response entries and `tgw command watch` lines name the device the command was for.
TEST(ClientCommands, WatchLinesNameTheDevice) {
  redis_server server;
  auto redis = server.connect();
  const std::string imei = "356307042441013";
  redis.command({"HSET", "connections:registry", imei, "A"});
  redis.command({"SET", "instance:heartbeat:A", "1", "EX", "90"});
  redis.command({"XGROUP", "CREATE", "commands:outbound:A", "ingest", "0", "MKSTREAM"});
  const infra::redis::connection::options where{server.endpoint(), 1000ms, 3000ms, "test"};
  infra::commands::command_publisher publisher(where, 200ms);
  infra::commands::redis_command_store store(where, "A");
  const std::string log = ::testing::TempDir() + "/watch.log";
  std::remove(log.c_str());
  child_process watch({TGW_BINARY, "command", "watch", "--redis",
                       "redis://127.0.0.1:" + std::to_string(server.port())},
                      log);
  std::string error;
  // The watcher prints what comes after it started: answer commands until one shows.
  const bool shown = eventually([&] {
    if (!publisher.publish(imei, "getinfo", 12, 300s, false, error)) return false;
    ports::store_failure failed;
    const auto got = store.read_new(100ms, 16, failed);
    if (!got || got->empty()) return false;
    for (const auto& e : *got) store.resolve(e, {"responded", "FW:1.2", ""}, failed);
    std::ifstream in(log);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return text.find(" " + imei + " ") != std::string::npos;
  });
  EXPECT_TRUE(shown);
  // The time is for people: UTC to the millisecond, not epoch milliseconds.
  {
    std::ifstream in(log);
    std::string first;
    std::getline(in, first);
    EXPECT_TRUE(std::regex_search(
        first, std::regex("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z " + imei +
                          " [0-9a-f]{32} responded: FW:1\\.2$")))
        << first;
  }
  const auto entries = redis.command({"XREVRANGE", "commands:responses", "+", "-", "COUNT", "1"});
  ASSERT_EQ(entries.elements.size(), 1U);
  const auto& fields = entries.elements[0].elements[1].elements;
  // imei comes after the seed's fields, and the reply's bytes after it.
  ASSERT_GE(fields.size(), 4U);
  EXPECT_EQ(fields[fields.size() - 4].text, "imei");
  EXPECT_EQ(fields[fields.size() - 3].text, imei);
  EXPECT_EQ(fields[fields.size() - 2].text, "response_hex");
  EXPECT_EQ(fields.back().text, "46573A312E32");  // "FW:1.2"
  watch.signal(SIGTERM);
  EXPECT_EQ(watch.wait(), 0);
}

// A response an older gateway wrote, the reply's raw bytes in `response` and no
// response_hex: watch takes bytes that are no UTF-8 for bytes, in JSON and in a line,
// and a raw control byte never reaches the terminal.
TEST(ClientCommands, WatchShowsAnOlderGatewaysRawReplyAsBytes) {
  redis_server server;
  auto redis = server.connect();
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port());
  const std::string raw("\xC5\x1B[2J\x00", 6);
  for (const bool json : {true, false}) {
    const std::string log = ::testing::TempDir() + "/watch-raw.log";
    std::remove(log.c_str());
    std::vector<std::string> argv{TGW_BINARY, "command", "watch", "--redis", url};
    if (json) argv.push_back("--json");
    child_process watch(argv, log);
    std::string text;
    // The watcher prints what comes after it started: add responses until one shows.
    const bool shown = eventually([&] {
      redis.command({"XADD", "commands:responses", "*", "command_id", "c0ffee", "status",
                     "responded", "response", raw, "responded_at", "1", "imei", "356307042441013"});
      std::ifstream in(log);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      return text.find("c0ffee") != std::string::npos;
    });
    ASSERT_TRUE(shown) << text;
    watch.signal(SIGTERM);
    EXPECT_EQ(watch.wait(), 0);
    EXPECT_EQ(text.find('\x1B'), std::string::npos) << "a raw ESC reached the terminal";
    if (json) {
      EXPECT_NE(text.find(R"("response":null)"), std::string::npos) << text;
      EXPECT_NE(text.find(R"("response_hex":"C51B5B324A00")"), std::string::npos) << text;
    } else {
      EXPECT_NE(text.find("c0ffee responded: \\xc5\\x1b[2J\\x00"), std::string::npos) << text;
    }
  }
}

}  // namespace
}  // namespace tgw::test
