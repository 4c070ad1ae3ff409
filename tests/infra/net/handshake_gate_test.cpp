#include "infra/net/handshake_gate.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tgw::infra::net {
namespace {

TEST(HandshakeGate, BeyondTheLimitHandshakesWaitInArrivalOrder) {
  handshake_gate gate(2);
  std::vector<int> started;
  std::uint64_t ticket = 0;
  auto starter = [&started](int id) {
    return [&started, id] {
      started.push_back(id);
      return true;
    };
  };
  EXPECT_TRUE(gate.enter(starter(1), ticket));
  EXPECT_TRUE(gate.enter(starter(2), ticket));
  EXPECT_FALSE(gate.enter(starter(3), ticket));
  EXPECT_FALSE(gate.enter(starter(4), ticket));
  EXPECT_EQ(gate.running(), 2U);
  EXPECT_EQ(gate.waiting(), 2U);
  EXPECT_TRUE(started.empty());  // the two that entered start themselves

  gate.leave();  // 1 or 2 done: 3 gets the slot
  EXPECT_EQ(started, std::vector<int>{3});
  EXPECT_EQ(gate.running(), 2U);
  EXPECT_EQ(gate.waiting(), 1U);
  gate.leave();
  gate.leave();
  EXPECT_EQ(started, (std::vector<int>{3, 4}));
  EXPECT_EQ(gate.running(), 1U);
  gate.leave();
  EXPECT_EQ(gate.running(), 0U);
  EXPECT_TRUE(gate.enter(starter(5), ticket));
}

TEST(HandshakeGate, ASlotPassesOverConnectionsThatAreGoneOrWithdrew) {
  handshake_gate gate(1);
  std::vector<int> started;
  std::uint64_t ticket = 0;
  ASSERT_TRUE(gate.enter([] { return true; }, ticket));
  std::uint64_t gone = 0;
  std::uint64_t withdrawn = 0;
  std::uint64_t last = 0;
  EXPECT_FALSE(gate.enter([] { return false; }, gone));  // its connection died
  EXPECT_FALSE(gate.enter(
      [&started] {
        started.push_back(2);
        return true;
      },
      withdrawn));
  EXPECT_FALSE(gate.enter(
      [&started] {
        started.push_back(3);
        return true;
      },
      last));
  EXPECT_NE(gone, withdrawn);
  gate.withdraw(withdrawn);  // its handshake timeout fired while it waited
  EXPECT_EQ(gate.waiting(), 2U);
  gate.withdraw(withdrawn);  // twice is harmless
  gate.leave();
  EXPECT_EQ(started, std::vector<int>{3});
  EXPECT_EQ(gate.running(), 1U);
  EXPECT_EQ(gate.waiting(), 0U);
  gate.withdraw(last);  // its turn came already: nothing to take back
  EXPECT_EQ(gate.running(), 1U);
}

TEST(HandshakeGate, ZeroMeansNoLimit) {
  handshake_gate gate(0);
  std::uint64_t ticket = 0;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(gate.enter([] { return true; }, ticket));
  EXPECT_EQ(gate.running(), 1000U);
  EXPECT_EQ(gate.waiting(), 0U);
}

}  // namespace
}  // namespace tgw::infra::net
