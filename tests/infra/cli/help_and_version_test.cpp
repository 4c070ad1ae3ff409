// What an operator reads before anything runs: --version names the version and the
// commit of the build, the help says what each thing is, and a bad value that came
// from the environment is blamed on its variable.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/run_tgw.hpp"

namespace tgw::test {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

TEST(HelpAndVersion, VersionNamesTheProjectVersionAndTheCommit) {
  const run_result r = run_tgw("--version");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind(std::string("tgw ") + TGW_VERSION + " (commit ", 0), 0U) << r.out;
  const run_result head =
      run_command(std::string("git -C '") + TGW_SOURCE_DIR + "' rev-parse --short=12 HEAD");
  if (head.exit_code != 0) GTEST_SKIP() << "not a git checkout";
  EXPECT_NE(r.out.find("(commit " + trimmed(head.out)), std::string::npos) << r.out;
}

TEST(HelpAndVersion, HelpSaysWhatTheFlagsAndCommandsAre) {
  const run_result serve = run_tgw("serve --help");
  EXPECT_NE(serve.out.find("Device port, TCP and UDP"), std::string::npos) << serve.out;
  EXPECT_NE(serve.out.find("trace, debug, info, warn, error, critical or off"), std::string::npos)
      << serve.out;
  const run_result top = run_tgw("--help");
  EXPECT_NE(top.out.find("tgw node is a separate system"), std::string::npos) << top.out;
}

TEST(HelpAndVersion, ABadValueFromTheEnvironmentNamesItsVariable) {
  const run_result port = run_command(std::string("TGW_PORT=abc ") + TGW_BINARY + " serve");
  EXPECT_EQ(port.exit_code, 2) << port.out;
  EXPECT_NE(port.out.find("environment variable TGW_PORT"), std::string::npos) << port.out;
  // Typed on the command line, the flag is to blame, not the variable.
  const run_result typed =
      run_command(std::string("TGW_CRC=maybe ") + TGW_BINARY + " serve --crc sometimes");
  EXPECT_EQ(typed.exit_code, 2) << typed.out;
  EXPECT_EQ(typed.out.find("environment variable"), std::string::npos) << typed.out;
  // A writer linger longer than 100 ms would hold every ACK for it.
  const run_result linger =
      run_command(std::string("TGW_WRITER_LINGER_US=250000 ") + TGW_BINARY + " serve");
  EXPECT_EQ(linger.exit_code, 2) << linger.out;
  EXPECT_NE(linger.out.find("environment variable TGW_WRITER_LINGER_US"), std::string::npos)
      << linger.out;
}

}  // namespace
}  // namespace tgw::test
