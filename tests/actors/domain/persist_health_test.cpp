// Readiness as the writers report it, on a fake clock: not ready once every attempt
// has failed for the window, or a round trip has hung that long; ready again at the
// first success.
#include "actors/domain/persist_health.hpp"

#include <gtest/gtest.h>

namespace tgw::domain {
namespace {

using namespace std::chrono_literals;

class PersistHealth : public ::testing::Test {
 protected:
  clock::time_point t0 = clock::now();
  std::vector<std::string> lines;
  persist_health health{
      {3s, 30s, 2}, [this](const std::string& line) { lines.push_back(line); }, t0};
  // As the store's adapter names an ACL refusal.
  std::vector<persist_health::failure> noperm{
      {{"noperm", "NOPERM no permissions to run the 'time' command",
        "the Redis ACL user needs +time"},
       4}};
};

TEST_F(PersistHealth, EveryAttemptFailingForTheWindowIsNotReady) {
  health.started(0, t0);
  health.failed(0, noperm, false, t0 + 100ms);
  EXPECT_EQ(health.stalled_because(t0 + 2s), "");
  const auto stall = health.current(t0 + 2s);
  EXPECT_EQ(stall.reason, "noperm");
  EXPECT_DOUBLE_EQ(stall.seconds, 2.0);  // from the start of the failed attempt
  health.started(1, t0 + 2s);
  health.failed(1, noperm, false, t0 + 2100ms);
  const std::string why = health.stalled_because(t0 + 3s);
  EXPECT_NE(why.find("persisting failed for every attempt for 3.0 s"), std::string::npos) << why;
  EXPECT_NE(why.find("+time"), std::string::npos) << why;
  ASSERT_EQ(lines.size(), 1U);  // one warn line for the spell so far
  health.started(0, t0 + 4s);
  health.succeeded(0, t0 + 4s);
  EXPECT_EQ(health.stalled_because(t0 + 4s), "");
  EXPECT_EQ(health.current(t0 + 4s).reason, "");
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_NE(lines[1].find("recovered after"), std::string::npos);
}

// One Redis Cluster master of three failing: the others' devices are ACKed, so the
// instance stays ready while its log reports the failures.
TEST_F(PersistHealth, APartialFailureIsReady) {
  for (int i = 0; i < 10; ++i) {
    health.started(0, t0 + 1s * i);
    health.failed(0, noperm, true, t0 + 1s * i + 10ms);
  }
  EXPECT_EQ(health.stalled_because(t0 + 10s), "");
  EXPECT_EQ(lines.size(), 1U);
}

// A round trip that does not come back (a paused server) is a stall once it is older
// than the window and nothing succeeded since it started.
TEST_F(PersistHealth, AHungRoundTripIsNotReadyOnceOverdue) {
  health.started(0, t0 + 1s);
  EXPECT_EQ(health.stalled_because(t0 + 3500ms), "");
  const std::string why = health.stalled_because(t0 + 4s);
  EXPECT_NE(why.find("has not returned for 3.0 s"), std::string::npos) << why;
  EXPECT_EQ(health.current(t0 + 4s).reason, "stalled_call");
  // The other writer persists meanwhile: ready.
  health.started(1, t0 + 4s);
  health.succeeded(1, t0 + 4100ms);
  EXPECT_EQ(health.stalled_because(t0 + 5s), "");
  // Writer 0 still hangs, and nothing succeeded for the window since: a stall again.
  EXPECT_NE(health.stalled_because(t0 + 7100ms).find("has not returned for 3.0 s"),
            std::string::npos);
}

TEST_F(PersistHealth, StartingStalledIsNotReadyAtOnce) {
  health.start_stalled(
      {"replicas", "replicas: WAIT confirmed 0 of 1 within 1000 ms", "bring a replica back"}, t0);
  const std::string why = health.stalled_because(t0);
  EXPECT_NE(why.find("WAIT confirmed 0 of 1"), std::string::npos) << why;
  EXPECT_EQ(lines.size(), 1U);
  health.succeeded(0, t0 + 1s);
  EXPECT_EQ(health.stalled_because(t0 + 1s), "");
}

}  // namespace
}  // namespace tgw::domain
