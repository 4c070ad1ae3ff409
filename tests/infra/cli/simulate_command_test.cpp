#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include "tests/infra/sim/fake_gateway.hpp"

namespace {

struct run_result {
  int exit_code = -1;
  std::string out;
};

// Runs the real `tgw` binary, so the test covers flag parsing and exit codes too.
run_result run_tgw(const std::string& args, bool with_stderr = true) {
  const std::string command =
      std::string(TGW_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  run_result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(SimulateCommand, HelpListsTheFlags) {
  const run_result r = run_tgw("simulate --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--count",
                           "--codec",
                           "--records-per-packet",
                           "--io-per-record",
                           "--send-interval",
                           "--send-period",
                           "--ramp-up",
                           "--duration",
                           "--packets",
                           "--target",
                           "--transport",
                           "--ack-timeout",
                           "--reconnect",
                           "--no-reconnect",
                           "--reconnect-delay",
                           "--reconnect-max-delay",
                           "--bad-crc-share",
                           "--reply-text",
                           "--reply-delay-ms",
                           "--ignore-command-share",
                           "--imei-base",
                           "--source-spread",
                           "--io-threads",
                           "--seed",
                           "--cpu-policy",
                           "--quiet",
                           "--json",
                           "--log-level",
                           "--log-format",
                           "TGW_SIM_COUNT",
                           "127.0.0.1:5027"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

TEST(SimulateCommand, BadFlagsExitWithUsageError) {
  EXPECT_EQ(run_tgw("simulate --no-such-flag").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --codec 12").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --count 0").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --bad-crc-share 1.5").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --send-interval soon").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --send-period 1s --send-interval 1s").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --send-period often").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --target localhost").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --transport sctp").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --cpu-policy fast").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --records-per-packet 256").exit_code, 2);
  // Valid one by one, not together: the IMEIs would need 16 digits.
  EXPECT_EQ(run_tgw("simulate --imei-base 999999999999999 --count 2").exit_code, 2);
  EXPECT_EQ(run_tgw("simulate --reconnect-delay 10s --reconnect-max-delay 1s").exit_code, 2);
}

TEST(SimulateCommand, RunsAFleetAndPrintsAJsonSummary) {
  tgw::infra::sim::testing::fake_gateway gateway({});
  const run_result r = run_tgw(
      "simulate -q --json --count 3 --packets 2 --records-per-packet 2 --send-interval 0 "
      "--target 127.0.0.1:" +
          std::to_string(gateway.port()),
      false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"], 3);
  EXPECT_EQ(j["packets_sent"], 6);
  EXPECT_EQ(j["packets_acked"], 6);
  EXPECT_EQ(j["records_acked"], 12);
  EXPECT_EQ(j["resends"], 0);
  EXPECT_EQ(j["timeouts"], 0);
  EXPECT_EQ(j["disconnects"], 0);
  EXPECT_EQ(j["rejected_handshakes"], 0);
  for (const char* key : {"ack_p50_ms", "ack_p99_ms", "ack_max_ms", "elapsed_s", "records_per_s"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(gateway.frames().size(), 6u);
}

// Each second's line carries that second's latency histogram, whose counts add up to
// the line's ACKs, so a window's lines can be merged for an exact percentile.
TEST(SimulateCommand, TheProgressLogHasEachSecondsHistogram) {
  tgw::infra::sim::testing::fake_gateway gateway({});
  const std::string log = ::testing::TempDir() + "/progress.jsonl";
  const run_result r = run_tgw(
      "simulate -q --json --count 3 --send-period 100ms --duration 2500ms "
      "--progress-log " +
          log + " --target 127.0.0.1:" + std::to_string(gateway.port()),
      false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto summary = nlohmann::json::parse(r.out);
  std::ifstream in(log);
  std::uint64_t acks = 0;
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto j = nlohmann::json::parse(line);
    std::uint64_t in_histogram = 0;
    std::uint64_t highest = 0;
    for (const auto& [upper_us, count] : j["ack_latency_us"].items()) {
      highest = std::max<std::uint64_t>(highest, std::stoull(upper_us));
      in_histogram += count.get<std::uint64_t>();
    }
    EXPECT_EQ(in_histogram, j["acks"].get<std::uint64_t>()) << line;
    if (in_histogram > 0) {
      EXPECT_GE(highest, j["ack_max_us"].get<std::uint64_t>()) << line;
    }
    EXPECT_EQ(j["devices"], 3);
    acks += in_histogram;
  }
  EXPECT_GE(lines, 2);
  EXPECT_GT(acks, 0u);
  EXPECT_LE(acks, summary["packets_acked"].get<std::uint64_t>());
}

TEST(SimulateCommand, AnUnwritableProgressLogIsAClearError) {
  const run_result r = run_tgw("simulate --count 1 --progress-log /nonexistent/dir/p.jsonl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("cannot write the progress log"), std::string::npos) << r.out;
}

TEST(SimulateCommand, TextSummaryByDefault) {
  tgw::infra::sim::testing::fake_gateway gateway({});
  const run_result r = run_tgw(
      "simulate -q --count 1 --packets 1 --target 127.0.0.1:" + std::to_string(gateway.port()),
      false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("packets      1 sent, 1 acked"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ACK latency"), std::string::npos) << r.out;
}

TEST(SimulateCommand, NothingAckedExitsWithOne) {
  std::uint16_t port = 0;
  {
    tgw::infra::sim::testing::fake_gateway closed({});
    port = closed.port();
  }
  const run_result r = run_tgw(
      "simulate -q --json --count 2 --no-reconnect --target 127.0.0.1:" + std::to_string(port),
      false);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["connect_failures"], 2);
  EXPECT_EQ(j["packets_acked"], 0);
}

TEST(SimulateCommand, TooFewOpenFilesIsAClearError) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= 1'000'000)
    GTEST_SKIP() << "the hard limit allows a million sockets";
  const run_result r = run_tgw("simulate --count 1000000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("open files"), std::string::npos) << r.out;
}

}  // namespace
