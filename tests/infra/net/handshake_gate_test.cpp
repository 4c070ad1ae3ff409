#include "infra/net/handshake_gate.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace tgw::infra::net {
namespace {

using namespace std::chrono_literals;
using eviction = handshake_gate::eviction;
using clock = handshake_gate::clock;

// A gate's callbacks, recorded: who started, and who was evicted why.
struct recorder {
  std::vector<std::string> started;
  std::vector<std::pair<std::string, eviction>> evicted;

  handshake_gate::start_fn start(std::string name, bool alive = true) {
    return [this, name, alive] {
      if (alive) started.push_back(name);
      return alive;
    };
  }
  handshake_gate::evict_fn evict(std::string name) {
    return [this, name](eviction why) { evicted.emplace_back(name, why); };
  }
};

handshake_gate::settings limit_of(std::size_t limit) {
  return handshake_gate::settings{limit, 5000ms, 500ms};
}

TEST(HandshakeGate, AFreedSlotGoesToTheWaitingAddressThatHoldsTheFewest) {
  handshake_gate gate(limit_of(2));
  recorder r;
  std::uint64_t a1 = 0, a2 = 0, a3 = 0, b1 = 0;
  const auto t0 = clock::now();
  EXPECT_TRUE(gate.enter("A", r.start("a1"), r.evict("a1"), a1, t0));
  EXPECT_TRUE(gate.enter("A", r.start("a2"), r.evict("a2"), a2, t0));
  EXPECT_FALSE(gate.enter("A", r.start("a3"), r.evict("a3"), a3, t0));
  EXPECT_FALSE(gate.enter("B", r.start("b1"), r.evict("b1"), b1, t0));
  EXPECT_EQ(gate.running(), 2U);
  EXPECT_EQ(gate.waiting(), 2U);

  // A still holds one, B none: B's connection goes first although A's came earlier.
  gate.leave(a1);
  EXPECT_EQ(r.started, std::vector<std::string>{"b1"});
  gate.leave(a2);
  EXPECT_EQ(r.started, (std::vector<std::string>{"b1", "a3"}));
  EXPECT_EQ(gate.running(), 2U);
  EXPECT_EQ(gate.waiting(), 0U);
  EXPECT_TRUE(r.evicted.empty());
}

TEST(HandshakeGate, WithinAnAddressTheLineKeepsArrivalOrder) {
  handshake_gate gate(limit_of(1));
  recorder r;
  std::uint64_t first = 0, second = 0, third = 0;
  ASSERT_TRUE(gate.enter("A", r.start("first"), r.evict("first"), first));
  EXPECT_FALSE(gate.enter("A", r.start("second"), r.evict("second"), second));
  EXPECT_FALSE(gate.enter("A", r.start("third"), r.evict("third"), third));
  gate.leave(first);
  gate.leave(second);
  EXPECT_EQ(r.started, (std::vector<std::string>{"second", "third"}));
}

TEST(HandshakeGate, AHandshakeWaitingOnItsPeerPastTheStepTimeoutIsEvicted) {
  handshake_gate gate(limit_of(4));
  recorder r;
  std::uint64_t quiet = 0, busy = 0;
  const auto t0 = clock::now();
  ASSERT_TRUE(gate.enter("A", r.start("quiet"), r.evict("quiet"), quiet, t0));
  ASSERT_TRUE(gate.enter("B", r.start("busy"), r.evict("busy"), busy, t0));
  gate.waiting_on_peer(quiet, true, t0);
  gate.waiting_on_peer(busy, true, t0);
  gate.waiting_on_peer(busy, false, t0 + 1s);  // its peer answered; it works

  gate.sweep(t0 + 4999ms);
  EXPECT_TRUE(r.evicted.empty());
  gate.sweep(t0 + 5s);
  ASSERT_EQ(r.evicted.size(), 1U);
  EXPECT_EQ(r.evicted[0], std::make_pair(std::string("quiet"), eviction::stalled));
  // Told once: its connection leaves in its own time.
  gate.sweep(t0 + 6s);
  EXPECT_EQ(r.evicted.size(), 1U);
  gate.leave(quiet);
  EXPECT_EQ(gate.running(), 1U);
}

TEST(HandshakeGate, AWaitingAddressTakesTheSlotOfAStalledOneThatHoldsMore) {
  handshake_gate gate(limit_of(4));
  recorder r;
  std::vector<std::uint64_t> a(4);
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string name = "a" + std::to_string(i);
    ASSERT_TRUE(
        gate.enter("A", r.start(name), r.evict(name), a[i], t0 + std::chrono::milliseconds(i)));
    gate.waiting_on_peer(a[i], true, t0 + std::chrono::milliseconds(i));
  }
  // Within the grace period nothing is taken away.
  std::uint64_t b = 0;
  EXPECT_FALSE(gate.enter("B", r.start("b"), r.evict("b"), b, t0 + 100ms));
  EXPECT_TRUE(r.evicted.empty());
  // Past it, the sweep evicts the longest-waiting of A's, once.
  gate.sweep(t0 + 600ms);
  ASSERT_EQ(r.evicted.size(), 1U);
  EXPECT_EQ(r.evicted[0], std::make_pair(std::string("a0"), eviction::preempted));
  gate.sweep(t0 + 700ms);
  EXPECT_EQ(r.evicted.size(), 1U);
  // The evicted connection closes and leaves; its slot is B's.
  gate.leave(a[0]);
  EXPECT_EQ(r.started, std::vector<std::string>{"b"});
}

TEST(HandshakeGate, ANewAddressPreemptsAtOnceWhenTheHoldersAreStalled) {
  handshake_gate gate(limit_of(2));
  recorder r;
  std::uint64_t a1 = 0, a2 = 0, b = 0;
  const auto t0 = clock::now();
  ASSERT_TRUE(gate.enter("A", r.start("a1"), r.evict("a1"), a1, t0));
  ASSERT_TRUE(gate.enter("A", r.start("a2"), r.evict("a2"), a2, t0));
  gate.waiting_on_peer(a1, true, t0);
  gate.waiting_on_peer(a2, true, t0);
  EXPECT_FALSE(gate.enter("B", r.start("b"), r.evict("b"), b, t0 + 1s));
  ASSERT_EQ(r.evicted.size(), 1U);
  EXPECT_EQ(r.evicted[0].second, eviction::preempted);
}

TEST(HandshakeGate, AddressesWithTheirShareAreNotPreempted) {
  handshake_gate gate(limit_of(4));
  recorder r;
  std::vector<std::uint64_t> ids(4);
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string address = i < 2 ? "A" : "B";
    ASSERT_TRUE(gate.enter(address, r.start(address), r.evict(address), ids[i], t0));
    gate.waiting_on_peer(ids[i], true, t0);
  }
  // B waits with two already: A holds no more than it, so nothing moves.
  std::uint64_t b3 = 0;
  EXPECT_FALSE(gate.enter("B", r.start("b3"), r.evict("b3"), b3, t0 + 1s));
  gate.sweep(t0 + 2s);
  EXPECT_TRUE(r.evicted.empty());
  // C holds none: one of A's or B's two may go.
  std::uint64_t c = 0;
  EXPECT_FALSE(gate.enter("C", r.start("c"), r.evict("c"), c, t0 + 2s));
  EXPECT_EQ(r.evicted.size(), 1U);
}

TEST(HandshakeGate, LeavingTheLineAndLeavingTwiceChangeNothingElse) {
  handshake_gate gate(limit_of(1));
  recorder r;
  std::uint64_t holder = 0, gone = 0, withdrawn = 0, last = 0;
  ASSERT_TRUE(gate.enter("A", r.start("holder"), r.evict("holder"), holder));
  EXPECT_FALSE(gate.enter("B", r.start("gone", false), r.evict("gone"), gone));
  EXPECT_FALSE(gate.enter("C", r.start("withdrawn"), r.evict("withdrawn"), withdrawn));
  EXPECT_FALSE(gate.enter("D", r.start("last"), r.evict("last"), last));
  gate.leave(withdrawn);  // its handshake timeout fired while it waited
  gate.leave(withdrawn);
  EXPECT_EQ(gate.waiting(), 2U);
  gate.leave(holder);  // to B, whose connection is gone: it passes on to D
  EXPECT_EQ(r.started, std::vector<std::string>{"last"});
  EXPECT_EQ(gate.running(), 1U);
  EXPECT_EQ(gate.waiting(), 0U);
  gate.leave(holder);  // twice: nothing
  EXPECT_EQ(gate.running(), 1U);
}

TEST(HandshakeGate, ZeroMeansNoLimitButStalledHandshakesStillGo) {
  handshake_gate gate(limit_of(0));
  recorder r;
  std::uint64_t id = 0;
  const auto t0 = clock::now();
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(gate.enter("A", r.start("a"), r.evict("a"), id, t0));
  EXPECT_EQ(gate.running(), 1000U);
  EXPECT_EQ(gate.waiting(), 0U);
  gate.waiting_on_peer(id, true, t0);
  gate.sweep(t0 + 5s);
  EXPECT_EQ(r.evicted.size(), 1U);
}

}  // namespace
}  // namespace tgw::infra::net
