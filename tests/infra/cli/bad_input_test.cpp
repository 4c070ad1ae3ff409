// What a new user mistypes gets one precise line and the documented exit code (2 for
// usage), and nothing starts or is written: the command runs in an empty directory
// that must stay empty.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/run_tgw.hpp"

namespace tgw::test {
namespace {

class BadInput : public ::testing::Test {
 protected:
  BadInput() {
    dir = ::testing::TempDir() + "/bad-input-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  /// `tgw ARGS` run in the empty directory, with `env` before it.
  run_result tgw(const std::string& args, const std::string& env = "") {
    return run_command("cd '" + dir + "' && " + env + " " + TGW_BINARY + " " + args);
  }
  /// The output's lines that say something (CLI11's "Run with --help" hint aside).
  static std::vector<std::string> said(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line != "Run with --help for more information.") lines.push_back(line);
    return lines;
  }
  void expect_nothing_written() const {
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << "something was written in " << dir;
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir + "/../" + name;
    std::ofstream(path) << text;
    return std::filesystem::weakly_canonical(path).string();
  }
  std::string dir;
};

TEST_F(BadInput, AMistypedSubcommandIsNamedWithTheNearestOne) {
  const auto r = tgw("sevre");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(said(r.out).size(), 1U) << r.out;
  EXPECT_EQ(said(r.out)[0],
            "tgw: unknown subcommand 'sevre'; did you mean 'serve'? (tgw --help lists the "
            "subcommands)");
  // A word that is no typo of any gets no suggestion.
  const auto far = tgw("frobnicate");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.out.find("did you mean"), std::string::npos) << far.out;
  expect_nothing_written();
}

// The same one level down: `tgw command sned`.
TEST_F(BadInput, AMistypedNestedSubcommandIsNamedWithTheNearestOne) {
  const auto r = tgw("command sned --imei 356307042441013 --text getinfo");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(said(r.out).size(), 1U) << r.out;
  EXPECT_EQ(said(r.out)[0],
            "tgw: unknown subcommand 'sned' of 'tgw command'; did you mean 'send'? (tgw "
            "command --help lists the subcommands)");
  const auto tail = tgw("telemetry tial --from start");
  EXPECT_EQ(tail.exit_code, 2) << tail.out;
  EXPECT_NE(tail.out.find("did you mean 'tail'?"), std::string::npos) << tail.out;
  // A subcommand's own arguments are no subcommands: decode takes hex words.
  const auto decode = tgw("decode 00");
  EXPECT_EQ(decode.out.find("unknown subcommand"), std::string::npos) << decode.out;
  expect_nothing_written();
}

// A bound is said as a number a person reads, never as the largest double in full.
TEST_F(BadInput, ARangeErrorSaysItsBoundInWords) {
  for (const char* args :
       {"serve --journal-maxlen -1", "serve --telemetry-maxlen -5", "node --rdb -1",
        "node --health-ms 0", "replay --speed 0 x.pcap", "serve --telemetry-ungrouped-maxlen -1"}) {
    const auto r = tgw(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    ASSERT_FALSE(said(r.out).empty()) << args;
    const std::string line = said(r.out)[0];
    EXPECT_LT(line.size(), 120U) << args << ": " << line;
    EXPECT_EQ(line.find("179769313486231"), std::string::npos) << args << ": " << line;
  }
  EXPECT_EQ(said(tgw("serve --journal-maxlen -1").out)[0],
            "--journal-maxlen: '-1' is not above 0 (expected a number above 0)");
  EXPECT_EQ(said(tgw("serve --telemetry-maxlen -5").out)[0],
            "--telemetry-maxlen: '-5' is negative (expected a number, 0 or more)");
  EXPECT_EQ(said(tgw("node --rdb x").out)[0],
            "--rdb: 'x' is not a number (expected a number, 0 or more)");
  expect_nothing_written();
}

// An explicit --redis wins over TGW_REDIS, whatever the variable holds; and a bad value
// from the variable is said to come from it.
TEST_F(BadInput, AnExplicitRedisWinsOverAMalformedVariable) {
  const auto r = tgw("devices --redis redis://127.0.0.1:1", "TGW_REDIS=bogus");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // unreachable: the flag's URL was used
  EXPECT_NE(r.out.find("127.0.0.1:1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("bogus"), std::string::npos) << r.out;
  const auto bad = tgw("devices", "TGW_REDIS=bogus");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("bogus"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("TGW_REDIS"), std::string::npos) << bad.out;
  for (const std::string args :
       {"registry", "command send --imei 356307042441013 --text x", "telemetry tail", "serve"}) {
    const auto from_env = tgw(args, "TGW_REDIS=bogus");
    EXPECT_EQ(from_env.exit_code, 2) << args << ": " << from_env.out;
    EXPECT_NE(from_env.out.find("TGW_REDIS"), std::string::npos) << args << ": " << from_env.out;
    const auto flag = tgw(args + " --redis redis://127.0.0.1:1", "TGW_REDIS=bogus");
    EXPECT_EQ(flag.out.find("bogus"), std::string::npos) << args << ": " << flag.out;
  }
  expect_nothing_written();
}

TEST_F(BadInput, ANumberThatIsNoNumberSaysSo) {
  const auto count = tgw("simulate --count abc");
  EXPECT_EQ(count.exit_code, 2) << count.out;
  ASSERT_EQ(said(count.out).size(), 1U) << count.out;
  EXPECT_EQ(said(count.out)[0], "--count: 'abc' is not a number (expected 1 to 1000000)");
  const auto port = tgw("serve --port 5o27");
  EXPECT_EQ(port.exit_code, 2) << port.out;
  EXPECT_NE(port.out.find("--port: '5o27' is not a number"), std::string::npos) << port.out;
  // A number out of range keeps CLI11's own words.
  const auto range = tgw("simulate --count 0");
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_NE(range.out.find("not in range"), std::string::npos) << range.out;
  expect_nothing_written();
}

// --config after the subcommand is taken as before it: here its Redis, where nothing
// listens, is the one the gateway fails to reach.
TEST_F(BadInput, AConfigFileAfterTheSubcommandIsRead) {
  const std::string file = write(
      "after.toml", "[serve]\nredis = \"redis://127.0.0.1:1/0\"\nport = 0\nmetrics-addr = \"\"\n");
  for (const std::string& args : {"serve --config " + file, "serve --config=" + file}) {
    const auto r = tgw(args);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("redis://127.0.0.1:1/0"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("not expected"), std::string::npos) << r.out;
  }
  expect_nothing_written();
}

// The file, line and column, and what the TOML parser found there.
TEST_F(BadInput, AConfigFileSyntaxErrorNamesItsLine) {
  const std::string file = write("unclosed.toml", "# settings\n[serve\nport = 5099\n");
  const auto r = tgw("--config " + file + " serve");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(said(r.out).size(), 1U) << r.out;
  EXPECT_EQ(said(r.out)[0],
            file + ":2:7: Error while parsing table header: expected ']', saw '\\n'");
  const std::string junk = write("junk.toml", "port = 1\nthis is not toml\n");
  const auto j = tgw("--config " + junk + " serve");
  EXPECT_EQ(j.exit_code, 2) << j.out;
  EXPECT_NE(j.out.find(junk + ":2:6: Error while parsing key-value pair: expected '='"),
            std::string::npos)
      << j.out;
  // Multi-line values are TOML too.
  const std::string arrays =
      write("arrays.toml", "[serve]\nredis = \"redis://127.0.0.1:1/0\"\nport = [\n  0\n]\n");
  const auto a = tgw("--config " + arrays + " serve --metrics-addr ''");
  EXPECT_EQ(a.out.find("is not key = value"), std::string::npos) << a.out;
  expect_nothing_written();
}

TEST_F(BadInput, AMetricsAddressWithoutAPortIsAUsageError) {
  const auto r = tgw("serve --metrics-addr localhost");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(said(r.out).size(), 1U) << r.out;
  EXPECT_EQ(said(r.out)[0],
            "--metrics-addr: 'localhost' is not host:port (e.g. 127.0.0.1:9127 or [::1]:9127)");
  const auto sink = tgw("sink postgres --dsn x --metrics-addr :9");
  EXPECT_EQ(sink.exit_code, 2) << sink.out;
  expect_nothing_written();
}

// Database 0 is the only one a cluster has: naming it is no mistake (the client then
// fails to reach the cluster, exit 1, not a usage error).
TEST_F(BadInput, AClusterUrlNamingDatabaseZeroIsAccepted) {
  const auto r = tgw("registry --redis redis+cluster://127.0.0.1:1/0");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.find("database 0 only"), std::string::npos) << r.out;
  const auto other = tgw("registry --redis redis+cluster://127.0.0.1:1/3");
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_NE(other.out.find("database 0 only"), std::string::npos) << other.out;
  expect_nothing_written();
}

// The design's name for the janitor's period still works beside TGW_*, and a bad value
// names the variable the user set.
TEST_F(BadInput, TheJanitorIntervalReadsBothItsVariables) {
  const auto design = tgw("serve", "JANITOR_INTERVAL_MS=abc");
  EXPECT_EQ(design.exit_code, 2) << design.out;
  EXPECT_NE(design.out.find("environment variable JANITOR_INTERVAL_MS"), std::string::npos)
      << design.out;
  const auto ours = tgw("serve", "TGW_JANITOR_INTERVAL_MS=abc");
  EXPECT_EQ(ours.exit_code, 2) << ours.out;
  EXPECT_NE(ours.out.find("environment variable TGW_JANITOR_INTERVAL_MS"), std::string::npos)
      << ours.out;
  expect_nothing_written();
}

}  // namespace
}  // namespace tgw::test
