// The membership actor's calls, on CAF's deterministic scheduler and a store that
// records them: a node joins before anything else (the join is what returns an
// earlier run's unfinished messages), then runs the health check. What Redis does
// with these calls is tested against a redis-server in tests/infra/node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "actors/node/membership.hpp"
#include "tests/support/deterministic_actors.hpp"

namespace tgw::actors::node {
namespace {

using namespace std::chrono_literals;

// Records each membership call; the rest of the store is not used by this actor.
class recording_node_store final : public infra::node::node_store {
 public:
  std::vector<std::string> calls;

  std::optional<infra::node::membership_view> join(const std::string&) override {
    calls.emplace_back("join");
    return infra::node::membership_view{};
  }
  std::optional<infra::node::membership_view> health_check(const std::string&) override {
    calls.emplace_back("health");
    return infra::node::membership_view{};
  }
  infra::node::emit_result emit(const std::string&, std::int64_t, int) override { return {}; }
  std::optional<std::string> take(const std::string&, std::chrono::milliseconds) override {
    return std::nullopt;
  }
  infra::node::completion complete(const std::string&, const std::string&, bool,
                                   const std::string&) override {
    return {};
  }
  void leave(const std::string&) override { calls.emplace_back("leave"); }
  [[nodiscard]] std::string last_error() const override { return {}; }
};

class MembershipLogic : public ::testing::Test, protected test::deterministic_actors {};

TEST_F(MembershipLogic, ANodeJoinsFirstThenChecksItsHealth) {
  auto store = std::make_shared<recording_node_store>();
  node_config config;
  config.id = "n1";
  const membership_actor m = sys.spawn(membership, config, store, std::vector<role_actor>{});
  sched.run();
  ASSERT_EQ(store->calls, std::vector<std::string>{"join"})
      << "a node that starts must join: only the join returns what an earlier run held";
  wait(config.health_interval);
  EXPECT_EQ(store->calls, (std::vector<std::string>{"join", "health"}));
  caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
  sched.run();
  EXPECT_EQ(store->calls.back(), "leave");
}

}  // namespace
}  // namespace tgw::actors::node
