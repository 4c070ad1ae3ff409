// The defaults `tgw serve` fills in from the host and the Redis it is given.

#include <algorithm>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "infra/cli/serve_options.hpp"

namespace tgw::infra {
namespace {

int half_the_cores() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
}

app::gateway_plan plan_for(const std::string& redis_url, int writer_shards = 0) {
  serve_options o;
  o.redis_url = redis_url;
  o.writer_shards = writer_shards;
  std::string error;
  const auto plan = plan_gateway(o, error);
  EXPECT_TRUE(plan.has_value()) << error;
  return plan.value_or(app::gateway_plan{});
}

// A second writer keeps one server busy while the first waits for its replies.
TEST(ServePlan, OneServerGetsAtLeastTwoWriters) {
  EXPECT_EQ(plan_for("redis://127.0.0.1:6379").writer_shards, std::max(2, half_the_cores()));
  EXPECT_EQ(plan_for("redis+sentinel://127.0.0.1:26379/tgw").writer_shards,
            std::max(2, half_the_cores()));
}

// One writer's round trip is a pipeline to every master at once: a second one on few
// cores doubled the sends and wake-ups for no more throughput.
TEST(ServePlan, AClusterGetsAtLeastOneWriter) {
  EXPECT_EQ(plan_for("redis+cluster://127.0.0.1:7000,127.0.0.1:7001").writer_shards,
            std::max(1, half_the_cores()));
}

TEST(ServePlan, WritersGivenAreWritersPlanned) {
  EXPECT_EQ(plan_for("redis+cluster://127.0.0.1:7000", 3).writer_shards, 3);
  EXPECT_EQ(plan_for("redis://127.0.0.1:6379", 1).writer_shards, 1);
}

}  // namespace
}  // namespace tgw::infra
