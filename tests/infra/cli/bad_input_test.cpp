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

TEST_F(BadInput, AConfigFileSyntaxErrorNamesItsLine) {
  const std::string file = write("unclosed.toml", "# settings\n[serve\nport = 5099\n");
  const auto r = tgw("--config " + file + " serve");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(said(r.out).size(), 1U) << r.out;
  EXPECT_EQ(said(r.out)[0],
            file + ":2: '[serve' opens a section that is not closed (write [serve])");
  const std::string junk = write("junk.toml", "port = 1\nthis is not toml\n");
  const auto j = tgw("--config " + junk + " serve");
  EXPECT_EQ(j.exit_code, 2) << j.out;
  EXPECT_NE(j.out.find(junk + ":2: 'this is not toml' is not key = value"), std::string::npos)
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
