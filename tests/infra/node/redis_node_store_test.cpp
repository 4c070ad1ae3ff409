#include "infra/node/redis_node_store.hpp"
#include "infra/node/node_keys.hpp"

#include <gtest/gtest.h>

#include <thread>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "tests/support/redis_backend.hpp"

namespace tgw::infra::node {
namespace {

using namespace std::chrono_literals;

constexpr auto inactive = 150ms;

class RedisNodeStore : public ::testing::Test {
 protected:
  std::unique_ptr<redis_node_store> store(std::int64_t max_messages = 0,
                                          std::int64_t queue_limit = 0) {
    return std::make_unique<redis_node_store>(
        redis::connection::options{backend.endpoint(), 1000ms, 3000ms, "test"},
        node_timing{inactive, 10000ms, max_messages, queue_limit}, true);
  }
  /// Nodes a and b joined (a holds the lease), and a message a emitted waits in the queue.
  void two_nodes_and_a_message(std::unique_ptr<redis_node_store>& a,
                               std::unique_ptr<redis_node_store>& b) {
    a = store();
    b = store();
    ASSERT_TRUE(a->join("a"));
    ASSERT_TRUE(b->join("b"));
    ASSERT_TRUE(a->emit("a", 1, 1).accepted());
  }
  // Lets `inactive` pass so nodes that made no call in the meantime count as gone.
  static void go_silent() { std::this_thread::sleep_for(inactive + 100ms); }

  /// A node key's name: on a cluster every node key carries the node hash tag.
  static std::string k(const char* name) {
    return std::string(test::redis_backend::on_cluster() ? "{tgw-node}" : "") + name;
  }

  test::redis_backend backend;
  redis::connection redis = backend.connect();
};

TEST_F(RedisNodeStore, FirstNodeJoinsAndTakesTheLease) {
  auto a = store();
  const auto view = a->join("a");
  ASSERT_TRUE(view.has_value()) << a->last_error();
  EXPECT_EQ(view->emitter, "a");
  EXPECT_EQ(view->epoch, 1);
  EXPECT_EQ(redis.command({"HEXISTS", k(keys::list), "a"}).integer, 1);
  EXPECT_EQ(redis.command({"LRANGE", k(keys::ids), "0", "-1"}).elements.at(0).text, "a");
  EXPECT_EQ(redis.command({"GET", k(keys::emitter)}).text, "a");
}

TEST_F(RedisNodeStore, NodeKeysCarryTheTtlAndTheErrorListDoesNot) {
  auto a = store();
  ASSERT_TRUE(a->join("a"));
  ASSERT_TRUE(a->emit("a", 1, 1).accepted());
  auto b = store();
  ASSERT_TRUE(b->join("b"));
  const auto m = b->take("b", 100ms);
  ASSERT_TRUE(m);
  ASSERT_TRUE(b->complete("b", *m, true, "boom").accepted);
  ASSERT_TRUE(a->health_check("a"));
  for (const char* key : {keys::list, keys::ids, keys::emitter, keys::epoch, keys::sequence}) {
    const auto ttl = redis.command({"PTTL", k(key)}).integer;
    EXPECT_GT(ttl, 0) << key;
    EXPECT_LE(ttl, 10000) << key;
  }
  EXPECT_EQ(redis.command({"PTTL", k(keys::errors)}).integer, -1);
}

TEST_F(RedisNodeStore, LaterNodesJoinInOrderAsWorkers) {
  auto a = store();
  auto b = store();
  ASSERT_TRUE(a->join("a"));
  const auto view = b->join("b");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->emitter, "a");
  const auto ids = redis.command({"LRANGE", k(keys::ids), "0", "-1"});
  ASSERT_EQ(ids.elements.size(), 2U);
  EXPECT_EQ(ids.elements[1].text, "b");
}

TEST_F(RedisNodeStore, HealthCheckRemovesASilentEmitterAndPassesTheLeaseOn) {
  auto a = store();
  auto b = store();
  auto c = store();
  ASSERT_TRUE(a->join("a"));
  ASSERT_TRUE(b->join("b"));
  ASSERT_TRUE(c->join("c"));
  go_silent();
  ASSERT_TRUE(c->health_check("c"));  // c alone is alive now; b stays silent too
  const auto view = c->health_check("c");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->emitter, "c");
  EXPECT_EQ(view->epoch, 2);
  EXPECT_EQ(redis.command({"HEXISTS", k(keys::list), "a"}).integer, 0);
  EXPECT_EQ(redis.command({"LLEN", k(keys::ids)}).integer, 1);
}

TEST_F(RedisNodeStore, TheFirstRemainingIdBecomesTheEmitter) {
  auto a = store();
  auto b = store();
  auto c = store();
  ASSERT_TRUE(a->join("a"));
  ASSERT_TRUE(b->join("b"));
  ASSERT_TRUE(c->join("c"));
  go_silent();
  ASSERT_TRUE(b->health_check("b"));
  ASSERT_TRUE(c->health_check("c"));
  // a is gone; b registered before c.
  EXPECT_EQ(redis.command({"GET", k(keys::emitter)}).text, "b");
}

TEST_F(RedisNodeStore, AKilledWorkersMessageIsHandledExactlyOnce) {
  auto a = store();
  auto b = store();
  auto c = store();
  ASSERT_TRUE(a->join("a"));
  ASSERT_TRUE(b->join("b"));
  ASSERT_TRUE(c->join("c"));
  const auto emitted = a->emit("a", 1, 1);
  ASSERT_TRUE(emitted.accepted());
  const auto taken = b->take("b", 100ms);
  ASSERT_TRUE(taken);
  // b dies mid-way: it stops calling. a and c stay alive.
  go_silent();
  ASSERT_TRUE(c->health_check("c"));
  const auto view = a->health_check("a");
  ASSERT_TRUE(view);
  const auto again = c->take("c", 100ms);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *taken);
  EXPECT_TRUE(c->complete("c", *again, false, "").accepted);
  // b comes back and tries to finish what it held: refused, nothing counted twice.
  EXPECT_FALSE(b->complete("b", *taken, false, "").accepted);
  EXPECT_EQ(redis.command({"HGET", k(keys::handled), *taken}).text, "1");
  EXPECT_EQ(redis.command({"HLEN", k(keys::handled)}).integer, 1);
}

TEST_F(RedisNodeStore, ARestartUnderTheSameIdReturnsWhatTheKilledOneHeld) {
  std::unique_ptr<redis_node_store> a, b;
  ASSERT_NO_FATAL_FAILURE(two_nodes_and_a_message(a, b));
  const auto taken = b->take("b", 100ms);
  ASSERT_TRUE(taken);
  auto b_again = store();  // killed and restarted before anyone noticed
  ASSERT_TRUE(b_again->join("b"));
  EXPECT_EQ(redis.command({"LLEN", k(keys::queue)}).integer, 1);
  const auto retaken = b_again->take("b", 100ms);
  ASSERT_TRUE(retaken);
  EXPECT_EQ(*retaken, *taken);
}

// A killed incarnation's blocked BLMOVE served after the restarted one joined puts a
// message in the live node's processing list that nobody holds; the node returns it
// to the queue the first time it finds the queue empty.
TEST_F(RedisNodeStore, AMessageServedToAKilledIncarnationAfterTheRestartGoesBack) {
  std::unique_ptr<redis_node_store> a, b;
  ASSERT_NO_FATAL_FAILURE(two_nodes_and_a_message(a, b));
  auto b_again = store();
  ASSERT_TRUE(b_again->join("b"));
  // What the server does for the dead client's BLMOVE, after the join.
  ASSERT_TRUE(
      redis.command({"LMOVE", k(keys::queue), k(keys::processing_prefix) + "b", "RIGHT", "LEFT"})
          .is_string());
  // The log says so: an operator sees why a message was handled again.
  auto lines = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(8);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", lines));
  EXPECT_FALSE(b_again->take("b", 100ms).has_value());
  spdlog::set_default_logger(previous);
  const auto logged = lines->last_formatted();
  ASSERT_EQ(logged.size(), 1U);
  EXPECT_NE(logged[0].find("node b: 1 message(s) served to an earlier run of this node went back"),
            std::string::npos)
      << logged[0];
  EXPECT_EQ(redis.command({"LLEN", k(keys::queue)}).integer, 1);
  EXPECT_EQ(redis.command({"LLEN", k(keys::processing_prefix) + "b"}).integer, 0);
  const auto taken = b_again->take("b", 100ms);
  ASSERT_TRUE(taken);
  EXPECT_TRUE(b_again->complete("b", *taken, false, "").accepted);
}

// The server hands a removed node's blocked BLMOVE a message after the removal
// returned its list: the next health check returns it again, as long as the node has
// not registered again.
TEST_F(RedisNodeStore, AMessageMovedIntoARemovedNodesListAfterTheRemovalGoesBack) {
  std::unique_ptr<redis_node_store> a, b;
  ASSERT_NO_FATAL_FAILURE(two_nodes_and_a_message(a, b));
  go_silent();
  ASSERT_TRUE(b->health_check("b"));
  ASSERT_EQ(redis.command({"HEXISTS", k(keys::list), "a"}).integer, 0);
  ASSERT_TRUE(
      redis.command({"LMOVE", k(keys::queue), k(keys::processing_prefix) + "a", "RIGHT", "LEFT"})
          .is_string());
  const auto view = b->health_check("b");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->returned, 1);
  EXPECT_EQ(redis.command({"LLEN", k(keys::queue)}).integer, 1);
  EXPECT_EQ(redis.command({"LLEN", k(keys::processing_prefix) + "a"}).integer, 0);
  // Back again, a's list is its own: nobody else returns it.
  ASSERT_TRUE(a->health_check("a"));
  const auto again = a->take("a", 100ms);
  ASSERT_TRUE(again);
  ASSERT_TRUE(b->health_check("b"));
  EXPECT_EQ(redis.command({"LLEN", k(keys::processing_prefix) + "a"}).integer, 1);
  EXPECT_EQ(redis.command({"ZCARD", k(keys::departed)}).integer, 0);
  EXPECT_TRUE(a->complete("a", *again, false, "").accepted);
}

TEST_F(RedisNodeStore, APausedEmitterEmitsNothingAfterWakingUp) {
  std::unique_ptr<redis_node_store> a, b;
  ASSERT_NO_FATAL_FAILURE(two_nodes_and_a_message(a, b));
  go_silent();  // a is paused
  const auto view = b->health_check("b");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->emitter, "b");
  EXPECT_EQ(view->epoch, 2);
  // a wakes up and carries on with its old lease.
  EXPECT_FALSE(a->emit("a", 1, 1).accepted());
  const auto rejoin = a->health_check("a");
  ASSERT_TRUE(rejoin);
  EXPECT_TRUE(rejoin->rejoined);
  EXPECT_EQ(rejoin->emitter, "b");
  EXPECT_FALSE(a->emit("a", rejoin->epoch, 1).accepted());
  EXPECT_TRUE(b->emit("b", 2, 1).accepted());
  EXPECT_EQ(redis.command({"LLEN", k(keys::queue)}).integer, 2);
}

TEST_F(RedisNodeStore, EmittingStopsAtTheBudgetAndWaitsWhileTheQueueIsFull) {
  auto a = store(5, 3);
  ASSERT_TRUE(a->join("a"));
  const auto first = a->emit("a", 1, 4);
  EXPECT_TRUE(first.accepted());
  EXPECT_EQ(first.first_id, 1);
  EXPECT_EQ(first.last_id, 4);
  EXPECT_EQ(a->emit("a", 1, 4).outcome, emit_result::status::queue_full);
  redis.command({"DEL", k(keys::queue)});
  const auto last = a->emit("a", 1, 4);
  EXPECT_TRUE(last.accepted());
  EXPECT_EQ(last.last_id, 5);  // clipped to the budget
  EXPECT_EQ(a->emit("a", 1, 4).outcome, emit_result::status::exhausted);
}

TEST_F(RedisNodeStore, FailedMessagesGoToTheErrorListAndAreTakenOnce) {
  auto a = store();
  auto b = store();
  ASSERT_TRUE(a->join("a"));
  ASSERT_TRUE(b->join("b"));
  ASSERT_TRUE(a->emit("a", 1, 2).accepted());
  for (int i = 0; i < 2; ++i) {
    const auto m = b->take("b", 100ms);
    ASSERT_TRUE(m);
    ASSERT_TRUE(b->complete("b", *m, true, "handler failed").accepted);
  }
  const auto errors = a->take_errors();
  ASSERT_TRUE(errors);
  ASSERT_EQ(errors->size(), 2U);
  EXPECT_NE((*errors)[0].find(R"("node":"b")"), std::string::npos) << (*errors)[0];
  EXPECT_NE((*errors)[0].find("handler failed"), std::string::npos) << (*errors)[0];
  EXPECT_EQ(redis.command({"EXISTS", k(keys::errors)}).integer, 0);
  EXPECT_TRUE(a->take_errors()->empty());
}

TEST_F(RedisNodeStore, LeavingReturnsUnfinishedMessagesAndPassesTheLease) {
  std::unique_ptr<redis_node_store> a, b;
  ASSERT_NO_FATAL_FAILURE(two_nodes_and_a_message(a, b));
  ASSERT_TRUE(b->take("b", 100ms));
  EXPECT_EQ(redis.command({"LLEN", k(keys::queue)}).integer, 0);
  b->leave("b");
  EXPECT_EQ(redis.command({"LLEN", k(keys::queue)}).integer, 1);
  a->leave("a");
  EXPECT_EQ(redis.command({"EXISTS", k(keys::emitter)}).integer, 0);
  EXPECT_EQ(redis.command({"HLEN", k(keys::list)}).integer, 0);
}

TEST_F(RedisNodeStore, RedisDownFailsCallsCleanlyAndRecoversAfterRestart) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  test::redis_server& server = *backend.server();
  auto a = store();
  ASSERT_TRUE(a->join("a"));
  server.stop();
  EXPECT_FALSE(a->health_check("a").has_value());
  EXPECT_NE(a->last_error().find("IO"), std::string::npos) << a->last_error();
  EXPECT_FALSE(a->emit("a", 1, 1).accepted());
  EXPECT_FALSE(a->take("a", 50ms).has_value());
  server.start();  // empty: no library, no keys
  const auto view = a->health_check("a");
  ASSERT_TRUE(view.has_value()) << a->last_error();
  EXPECT_TRUE(view->rejoined);
  EXPECT_EQ(view->emitter, "a");
}

}  // namespace
}  // namespace tgw::infra::node
