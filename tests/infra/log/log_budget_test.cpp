#include "infra/log/log_budget.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/base_sink.h>

namespace tgw::infra {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// The lines spdlog writes, kept for the test.
class kept_lines final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> lines;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}
};

class LogBudget : public ::testing::Test {
 protected:
  void SetUp() override {
    sink = std::make_shared<kept_lines>();
    previous = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("budget-test", sink));
    configure_log_budgets({10'000ms, 2, 3});
  }
  void TearDown() override {
    spdlog::set_default_logger(previous);
    configure_log_budgets({});
  }
  std::shared_ptr<kept_lines> sink;
  std::shared_ptr<spdlog::logger> previous;
};

TEST_F(LogBudget, PastItsLinesACauseIsCountedAndTheNextWindowSaysHowMany) {
  log_budget budget{"test refusal", log_kind::refusal};
  const auto t0 = clock::now();
  std::uint64_t held = 0;
  EXPECT_TRUE(budget.take(held, spdlog::level::warn, t0));
  EXPECT_TRUE(budget.take(held, spdlog::level::warn, t0 + 1s));
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(budget.take(held, spdlog::level::warn, t0 + 2s));
  EXPECT_FALSE(budget.take(held, spdlog::level::warn, t0 + 9s));
  ASSERT_TRUE(budget.take(held, spdlog::level::warn, t0 + 10s));
  EXPECT_EQ(held, 1001U);
  EXPECT_TRUE(budget.take(held, spdlog::level::warn, t0 + 11s));
  EXPECT_EQ(held, 0U);
}

TEST_F(LogBudget, SessionLinesHaveABudgetOfTheirOwn) {
  log_budget budget{"test session", log_kind::session};
  const auto t0 = clock::now();
  std::uint64_t held = 0;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(budget.take(held, spdlog::level::info, t0));
  EXPECT_FALSE(budget.take(held, spdlog::level::info, t0));
}

TEST_F(LogBudget, AFloodWritesAFewLinesAndTheLastOneCountsTheRest) {
  static log_budget budget{"test flood", log_kind::refusal};
  for (int i = 0; i < 100'000; ++i) budget.log(spdlog::level::warn, "frame {} rejected", i);
  ASSERT_EQ(sink->lines.size(), 2U);
  EXPECT_EQ(sink->lines[0], "frame 0 rejected");
  // The end of the flood is told once its window closes, with no line of its own.
  flush_log_budgets(clock::now() + 10s);
  ASSERT_EQ(sink->lines.size(), 3U);
  EXPECT_NE(sink->lines[2].find("99998 line(s) of 'test flood' held back"), std::string::npos)
      << sink->lines[2];
  flush_log_budgets(clock::now() + 20s);
  EXPECT_EQ(sink->lines.size(), 3U);  // told once
}

TEST_F(LogBudget, ALineBelowTheLevelSpendsNothing) {
  static log_budget budget{"test debug", log_kind::refusal};
  for (int i = 0; i < 10; ++i) budget.log(spdlog::level::debug, "quiet {}", i);
  budget.log(spdlog::level::warn, "loud");
  ASSERT_EQ(sink->lines.size(), 1U);
  EXPECT_EQ(sink->lines[0], "loud");
}

}  // namespace
}  // namespace tgw::infra
