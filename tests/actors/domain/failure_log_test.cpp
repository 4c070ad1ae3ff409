// The failure log on a fake clock: one line when a spell starts, at most one per cause
// and interval while it lasts (with what it stands for), one when it ends.
#include "actors/domain/failure_log.hpp"

#include <gtest/gtest.h>

namespace tgw::domain {
namespace {

using namespace std::chrono_literals;

class FailureLog : public ::testing::Test {
 protected:
  failure_log log{{"persist", "devices are not ACKed", "packet(s) not ACKed", 10s},
                  [this](const std::string& line) { lines.push_back(line); }};
  std::vector<std::string> lines;
  clock::time_point t0 = clock::now();
  ports::failure_cause noperm{"noperm", "NOPERM no TIME", "the Redis ACL user needs +time"};
  ports::failure_cause replicas{"replicas", "WAIT confirmed 0 of 1", "bring a replica back"};
};

TEST_F(FailureLog, ASuccessOutsideASpellSaysNothing) {
  log.succeeded(t0);
  EXPECT_TRUE(lines.empty());
  EXPECT_FALSE(log.failing());
}

TEST_F(FailureLog, OneLinePerCauseAndIntervalWithWhatItStandsFor) {
  log.failed(noperm, 3, t0);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0],
            "persist: failing, devices are not ACKed: NOPERM no TIME: the Redis ACL user needs "
            "+time");
  EXPECT_TRUE(log.failing());
  // A hundred failures within the interval: no line.
  for (int i = 1; i <= 100; ++i) log.failed(noperm, 2, t0 + 9s * i / 100);
  EXPECT_EQ(lines.size(), 1U);
  // The first one past the interval: one line counting the failures since the last line.
  log.failed(noperm, 2, t0 + 10s);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_NE(lines[1].find("still failing after 10.0 s"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("(101 failure(s), 202 packet(s) not ACKed in the last 10.0 s)"),
            std::string::npos)
      << lines[1];
  // A second cause gets a line of its own at once, and its own interval.
  log.failed(replicas, 1, t0 + 11s);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_NE(lines[2].find("WAIT confirmed 0 of 1: bring a replica back"), std::string::npos);
  log.failed(noperm, 1, t0 + 15s);
  EXPECT_EQ(lines.size(), 3U);
}

TEST_F(FailureLog, TheEndOfASpellIsOneLineWithItsLengthAndCost) {
  log.failed(noperm, 5, t0);
  log.failed(replicas, 7, t0 + 1s);
  log.succeeded(t0 + 4500ms);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[2],
            "persist: recovered after 4.5 s (noperm, replicas); 2 failure(s), 12 packet(s) not "
            "ACKed meanwhile");
  EXPECT_FALSE(log.failing());
  log.succeeded(t0 + 5s);
  EXPECT_EQ(lines.size(), 3U);
  // A new spell starts from nothing: its first failure is a first line again.
  log.failed(noperm, 1, t0 + 6s);
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_NE(lines[3].find("persist: failing"), std::string::npos);
}

// One Redis Cluster master of three down: batches that miss it succeed between its
// failures. The spell goes on until a second passes without one: no line each time.
// It ended at the first success after the last failure, and the line says so.
TEST_F(FailureLog, SuccessesBetweenFailuresDoNotEndTheSpell) {
  for (int i = 0; i < 50; ++i) {
    log.failed(noperm, 1, t0 + 20ms * i);
    log.succeeded(t0 + 20ms * i + 10ms);
  }
  EXPECT_EQ(lines.size(), 1U);
  EXPECT_TRUE(log.failing());
  log.succeeded(t0 + 980ms + 1s);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_NE(lines[1].find("recovered after 1.0 s (noperm); 50 failure(s)"), std::string::npos)
      << lines[1];
}

// The device that was refused resends once, is ACKed, and goes quiet: no later success
// comes to end the spell. The success says when to look again, and settled() then
// writes the recovery line.
TEST_F(FailureLog, ASuccessSoonAfterTheLastFailureEndsTheSpellWhenSettled) {
  log.failed(noperm, 1, t0);
  log.failed(noperm, 1, t0 + 3s);
  EXPECT_EQ(log.succeeded(t0 + 3200ms), 800ms);
  EXPECT_EQ(lines.size(), 1U);
  log.settled(t0 + 3900ms);  // too soon: a failure could still follow
  EXPECT_EQ(lines.size(), 1U);
  EXPECT_TRUE(log.failing());
  log.settled(t0 + 4s);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1],
            "persist: recovered after 3.2 s (noperm); 2 failure(s), 2 packet(s) not ACKed "
            "meanwhile");
  EXPECT_FALSE(log.failing());
  log.settled(t0 + 5s);
  EXPECT_EQ(lines.size(), 2U);
}

// A failure after that success takes the pending end back: the spell goes on.
TEST_F(FailureLog, AFailureAfterThePendingSuccessKeepsTheSpellOn) {
  log.failed(noperm, 1, t0);
  EXPECT_GT(log.succeeded(t0 + 100ms), clock::duration::zero());
  log.failed(noperm, 1, t0 + 500ms);
  log.settled(t0 + 1200ms);
  EXPECT_EQ(lines.size(), 1U);
  EXPECT_TRUE(log.failing());
  EXPECT_EQ(log.succeeded(t0 + 1600ms), clock::duration::zero());
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_NE(lines[1].find("recovered after 1.6 s"), std::string::npos) << lines[1];
}

// The check was scheduled by the first success; a failure and another success came
// before it. settled() then says how long is left, and a later call ends the spell.
TEST_F(FailureLog, ACheckMadeTooSoonSaysWhenToLookAgain) {
  log.failed(noperm, 1, t0);
  EXPECT_EQ(log.succeeded(t0 + 100ms), 900ms);
  log.failed(noperm, 1, t0 + 500ms);
  EXPECT_EQ(log.succeeded(t0 + 600ms), 900ms);
  EXPECT_EQ(log.settled(t0 + 1000ms), 500ms);
  EXPECT_TRUE(log.failing());
  EXPECT_EQ(log.settled(t0 + 1500ms), clock::duration::zero());
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_NE(lines[1].find("recovered after 0.6 s"), std::string::npos) << lines[1];
}

// settled() without a success since the last failure ends nothing: the instance is
// still failing, however long ago that failure was.
TEST_F(FailureLog, SettledWithoutASuccessEndsNothing) {
  log.failed(noperm, 1, t0);
  log.settled(t0 + 10s);
  EXPECT_TRUE(log.failing());
  EXPECT_EQ(lines.size(), 1U);
}

}  // namespace
}  // namespace tgw::domain
