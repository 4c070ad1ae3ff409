// `tgw --config FILE` as an operator writes it: top-level keys reach whichever
// subcommand runs, a section wins for its subcommand, and a key nobody knows is an
// error that names it and the file.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
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

// TOML as its specification has it: a comment may follow a section header (as the
// example of docs/OPERATIONS.md writes it), and a value must be TOML (a URL quoted).
TEST(ConfigFile, ItIsTomlAsSpecified) {
  const std::string commented = write_config(
      "commented", "[registry]   # this subcommand only\nredis = \"redis://127.0.0.1:1/0\"  # x\n");
  const run_result r = run_tgw("--config " + commented + " registry");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // Redis unreachable: the file was read
  EXPECT_NE(r.out.find("127.0.0.1:1/0"), std::string::npos) << r.out;
  const std::string bare = write_config("bare", "redis = redis://127.0.0.1:1/0\n");
  const run_result b = run_tgw("--config " + bare + " registry");
  EXPECT_EQ(b.exit_code, 2) << b.out;
  EXPECT_NE(b.out.find(bare + ":1:"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("127.0.0.1:1/0 "), std::string::npos) << b.out;
  // Inline tables and dotted keys are TOML too: sections by another spelling.
  const std::string dotted = write_config("dotted", "registry.redis = \"redis://127.0.0.1:4/0\"\n");
  const run_result d = run_tgw("--config " + dotted + " registry");
  EXPECT_NE(d.out.find("127.0.0.1:4/0"), std::string::npos) << d.out;
}

// TGW_CONFIG names the file when --config does not; --config wins over it.
TEST(ConfigFile, TheEnvironmentVariableNamesTheFile) {
  const std::string file = write_config("from-env", "redis = \"redis://127.0.0.1:5/0\"\n");
  const run_result r = run_command("TGW_CONFIG=" + file + " " + TGW_BINARY + " registry");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("127.0.0.1:5/0"), std::string::npos) << r.out;
  const std::string other = write_config("given", "redis = \"redis://127.0.0.1:6/0\"\n");
  const run_result given =
      run_command("TGW_CONFIG=" + file + " " + TGW_BINARY + " --config " + other + " registry");
  EXPECT_NE(given.out.find("127.0.0.1:6/0"), std::string::npos) << given.out;
  const run_result missing =
      run_command(std::string("TGW_CONFIG=/nonexistent.toml ") + TGW_BINARY + " serve");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("/nonexistent.toml"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("environment variable TGW_CONFIG"), std::string::npos) << missing.out;
}

// The example of docs/OPERATIONS.md, read from the document: every key of it is one the
// subcommands have (it is run whole, on a gateway behind Sentinel, by the ctest
// docs.operations_config).
TEST(ConfigFile, TheDocumentedExampleParses) {
  std::ifstream in(std::string(TGW_SOURCE_DIR) + "/docs/OPERATIONS.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto begin = doc.find("```toml\n");
  ASSERT_NE(begin, std::string::npos);
  const auto end = doc.find("```", begin + 8);
  // The allowlist it names must exist (--allowlist is checked): here, an empty one.
  const std::string allowlist = ::testing::TempDir() + "/config-allowlist.txt";
  std::ofstream(allowlist) << "";
  const std::string text =
      std::regex_replace(doc.substr(begin + 8, end - begin - 8),
                         std::regex(R"(allowlist = "[^"]*")"), "allowlist = \"" + allowlist + "\"");
  ASSERT_NE(text.find(allowlist), std::string::npos);
  const std::string file = write_config("documented", text);
  // --help after the file is read: no error of the file's, and nothing started.
  const run_result serve = run_tgw("--config " + file + " serve --help");
  EXPECT_EQ(serve.exit_code, 0) << serve.out;
  const run_result send = run_tgw("--config " + file + " command send --help");
  EXPECT_EQ(send.exit_code, 0) << send.out;
  // A misspelt key beside them still is an error.
  const std::string typo = write_config("documented-typo", text + "[serve.x]\nportt = 1\n");
  EXPECT_EQ(run_tgw("--config " + typo + " serve --port 0").exit_code, 2);
}

}  // namespace
}  // namespace tgw::test
