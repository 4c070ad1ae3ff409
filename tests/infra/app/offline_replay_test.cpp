// Offline replay against committed captures and golden event sequences. The captures
// are built by tests/support/replay_scenarios.hpp; set TGW_UPDATE_GOLDEN=1 to rewrite
// the committed files (captures and .jsonl) after a deliberate change.
#include "infra/app/run_offline_replay.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "infra/capture/capture_loader.hpp"
#include "tests/support/replay_scenarios.hpp"
#include "tests/support/run_tgw.hpp"

namespace tgw::infra::app {
namespace {

namespace sc = test::scenarios;

const std::filesystem::path data_dir =
    std::filesystem::path(TGW_SOURCE_DIR) / "tests/data/captures";

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool updating() {
  const char* v = std::getenv("TGW_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// Runs `tgw replay` with stdout and stderr apart.
test::run_result replay(const std::string& args, std::string& err) {
  const auto err_path = std::filesystem::path(::testing::TempDir()) / "replay_stderr.txt";
  // A stream, not a chain of `+`: GCC 12 at -O3 reports a false overflow in the chain.
  std::ostringstream command;
  command << "(" << TGW_BINARY << " replay " << args << " 2>" << err_path.string() << ")";
  auto r = test::run_command(command.str());
  err = read_all(err_path);
  return r;
}

class GoldenCapture : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCapture, CommittedCaptureIsTheScenario) {
  const auto name = GetParam();
  const auto built = std::filesystem::path(::testing::TempDir()) / (name + ".pcap");
  const auto builder = name == "two_devices" ? sc::two_devices() : sc::ipv6_device();
  ASSERT_TRUE(builder.write(built.string()));
  if (updating())
    std::filesystem::copy_file(built, data_dir / (name + ".pcap"),
                               std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(read_all(built), read_all(data_dir / (name + ".pcap")));
}

TEST_P(GoldenCapture, OfflineOutputEqualsTheGoldenEvents) {
  const auto name = GetParam();
  std::string err;
  const auto r = replay("--offline " + (data_dir / (name + ".pcap")).string(), err);
  if (updating()) std::ofstream(data_dir / (name + ".jsonl"), std::ios::binary) << r.out;
  EXPECT_EQ(r.exit_code, 0) << err;
  EXPECT_EQ(r.out, read_all(data_dir / (name + ".jsonl")));
  EXPECT_NE(err.find("0 differing, 0 capture errors"), std::string::npos) << err;
}

TEST_P(GoldenCapture, SameCaptureSameEvents) {
  const auto capture =
      infra::capture::load_captures({(data_dir / (GetParam() + ".pcap")).string()}, 5027);
  const auto first = run_offline_replay(capture, {});
  const auto second = run_offline_replay(capture, {});
  ASSERT_FALSE(first.events.empty());
  ASSERT_EQ(first.events.size(), second.events.size());
  for (std::size_t i = 0; i < first.events.size(); ++i)
    EXPECT_EQ(infra::replay::to_json_line(first.events[i]),
              infra::replay::to_json_line(second.events[i]));
}

INSTANTIATE_TEST_SUITE_P(Captures, GoldenCapture, ::testing::Values("two_devices", "ipv6_device"));

TEST(OfflineReplay, TwoDevicesFoldAsTheRedisFunctionsDo) {
  const auto capture =
      infra::capture::load_captures({(data_dir / "two_devices.pcap").string()}, 5027);
  const auto result = run_offline_replay(capture, {});
  std::vector<std::string> a_types;
  std::vector<std::string> b_types;
  for (const auto& e : result.events)
    (e.imei == "356307042441013" ? a_types : b_types).push_back(e.fields.front().second);
  EXPECT_EQ(a_types, (std::vector<std::string>{"identified", "records_accepted", "packet_resent",
                                               "disconnected"}));
  EXPECT_EQ(b_types, (std::vector<std::string>{"identified", "frame_rejected", "records_accepted",
                                               "disconnected"}));
  ASSERT_EQ(result.reports.size(), 2U);
  EXPECT_TRUE(result.reports[0].as_recorded()) << infra::replay::describe(result.reports[0]);
  EXPECT_EQ(result.reports[0].replayed.acks, (std::vector<std::uint32_t>{3, 3}));
}

TEST(OfflineReplay, TruncatedCaptureIsReportedAndTheRestReplays) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "cut.pcap";
  ASSERT_TRUE(sc::complete_then_cut().write(path.string()));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 20);
  std::string err;
  const auto r = replay("--offline " + path.string(), err);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(err.find(path.string() + ": packet 16 at byte offset "), std::string::npos) << err;
  // The first device replayed whole, the second up to the cut.
  EXPECT_NE(r.out.find(R"("imei":"356307042441013","type":"records_accepted")"), std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(R"("imei":"356307042441021","type":"disconnected","reason":"capture ended")"),
      std::string::npos)
      << r.out;
}

TEST(ReplayCommand, UsageErrorsExitTwo) {
  std::string err;
  EXPECT_EQ(replay((data_dir / "two_devices.pcap").string(), err).exit_code, 2);
  EXPECT_EQ(replay("--offline --to 127.0.0.1:1 " + (data_dir / "two_devices.pcap").string(), err)
                .exit_code,
            2);
  EXPECT_EQ(replay("--to nonsense " + (data_dir / "two_devices.pcap").string(), err).exit_code, 2);
  EXPECT_EQ(replay("--offline", err).exit_code, 2);
}

}  // namespace
}  // namespace tgw::infra::app
