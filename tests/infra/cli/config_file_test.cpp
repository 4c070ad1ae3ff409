// `tgw --config FILE` as an operator writes it: top-level keys reach whichever
// subcommand runs, a section wins for its subcommand, and a key nobody knows is an
// error that names it and the file.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/support/run_tgw.hpp"

namespace tgw::test {
namespace {

std::string write_config(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/config-" + name + ".toml";
  std::ofstream(path) << text;
  return path;
}

// Each URL points at a port where nothing listens, so the error shows which one was used.
TEST(ConfigFile, TopLevelKeysReachTheRunningSubcommand) {
  const std::string file = write_config("top", "redis = \"redis://127.0.0.1:1/0\"\n");
  const run_result registry = run_tgw("--config " + file + " registry");
  EXPECT_EQ(registry.exit_code, 1) << registry.out;
  EXPECT_NE(registry.out.find("127.0.0.1:1/0"), std::string::npos) << registry.out;
  const run_result serve = run_tgw("--config " + file + " serve --port 0 --metrics-addr ''");
  EXPECT_EQ(serve.exit_code, 1) << serve.out;
  EXPECT_NE(serve.out.find("127.0.0.1:1/0"), std::string::npos) << serve.out;
}

TEST(ConfigFile, ASectionWinsForItsSubcommand) {
  const std::string file = write_config(
      "section",
      "redis = \"redis://127.0.0.1:1/0\"\n[registry]\nredis = \"redis://127.0.0.1:2/0\"\n");
  const run_result r = run_tgw("--config " + file + " registry");
  EXPECT_NE(r.out.find("127.0.0.1:2/0"), std::string::npos) << r.out;
  // The command line wins over both.
  const run_result flag = run_tgw("--config " + file + " registry --redis redis://127.0.0.1:3/0");
  EXPECT_NE(flag.out.find("127.0.0.1:3/0"), std::string::npos) << flag.out;
}

TEST(ConfigFile, UnknownKeysAndSectionsAreErrorsNamingThem) {
  const std::string typo = write_config("typo", "[serve]\nportx = 5027\n");
  const run_result key = run_tgw("--config " + typo + " serve");
  EXPECT_EQ(key.exit_code, 2) << key.out;
  EXPECT_NE(key.out.find("unknown key 'portx' in section [serve] of " + typo), std::string::npos)
      << key.out;
  const std::string top = write_config("nonsense", "nonsense = 1\n");
  const run_result top_key = run_tgw("--config " + top + " registry");
  EXPECT_EQ(top_key.exit_code, 2) << top_key.out;
  EXPECT_NE(top_key.out.find("unknown key 'nonsense' in " + top), std::string::npos) << top_key.out;
  const std::string section = write_config("section-typo", "[serv]\nport = 1\n");
  const run_result bad_section = run_tgw("--config " + section + " registry");
  EXPECT_EQ(bad_section.exit_code, 2) << bad_section.out;
  EXPECT_NE(bad_section.out.find("unknown section [serv]"), std::string::npos) << bad_section.out;
}

// One file serves every subcommand: a key of another subcommand is no error.
TEST(ConfigFile, AKeyOfAnotherSubcommandIsNoError) {
  const std::string file = write_config("other", "count = 5\nredis = \"redis://127.0.0.1:1/0\"\n");
  const run_result r = run_tgw("--config " + file + " registry");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // Redis unreachable, not a config error
  EXPECT_EQ(r.out.find("unknown key"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tgw::test
