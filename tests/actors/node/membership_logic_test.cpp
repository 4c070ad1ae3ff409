// The membership actor's calls, on CAF's deterministic scheduler and a store that
// records them: a node joins before anything else (the join is what returns an
// earlier run's unfinished messages), then runs the health check. What Redis does
// with these calls is tested against a redis-server in tests/infra/node.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "actors/node/membership.hpp"
#include "tests/support/deterministic_actors.hpp"

namespace tgw::actors::node {
namespace {

using namespace std::chrono_literals;

// Records each membership call; the rest of the store is not used by this actor.
class recording_node_store final : public ports::node_store {
 public:
  std::vector<std::string> calls;
  ports::membership_view health_view;  ///< What every health check answers.

  std::optional<ports::membership_view> join(const std::string&) override {
    calls.emplace_back("join");
    return ports::membership_view{};
  }
  std::optional<ports::membership_view> health_check(const std::string&) override {
    calls.emplace_back("health");
    return health_view;
  }
  ports::emit_result emit(const std::string&, std::int64_t, int) override { return {}; }
  std::optional<std::string> take(const std::string&, std::chrono::milliseconds) override {
    return std::nullopt;
  }
  ports::completion complete(const std::string&, const std::string&, bool,
                             const std::string&) override {
    return {};
  }
  void leave(const std::string&) override { calls.emplace_back("leave"); }
  [[nodiscard]] ports::store_failure last_failure() const override { return {}; }
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

// A health check that returned messages without removing anyone (the lists of nodes
// removed earlier, which the server handed a message after their removal) says so.
TEST_F(MembershipLogic, MessagesReturnedFromRemovedNodesAreLogged) {
  auto store = std::make_shared<recording_node_store>();
  store->health_view.returned = 2;
  node_config config;
  config.id = "n1";
  auto lines = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(8);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", lines));
  const membership_actor m = sys.spawn(membership, config, store, std::vector<role_actor>{});
  sched.run();
  wait(config.health_interval);
  caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
  sched.run();
  spdlog::set_default_logger(previous);
  const auto logged = lines->last_formatted();
  EXPECT_TRUE(std::any_of(logged.begin(), logged.end(), [](const std::string& line) {
    return line.find("node n1: returned 2 message(s) handed to removed node(s)") !=
           std::string::npos;
  }));
}

}  // namespace
}  // namespace tgw::actors::node
