// The `tgw serve` process itself (gateway_fixture.hpp): its threads' CPU policy, its
// allocator, SIGTERM, and the errors of bad flags and an unreachable Redis.
#include <sched.h>
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/actors/gateway/gateway_fixture.hpp"

namespace tgw::test::gateway_suite {
namespace {

/// The scheduling policy of each thread of process `pid` (a thread that ends while they
/// are read is left out).
std::vector<int> thread_policies(int pid) {
  std::vector<int> policies;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    const int policy = ::sched_getscheduler(std::stoi(task.path().filename().string()));
    if (policy >= 0) policies.push_back(policy);
  }
  return policies;
}

TEST_F(Gateway, EveryThreadRunsUnderTheChosenCpuPolicy) {
  // `keep`: what the process was started with, here this test's own policy.
  const std::pair<const char*, int> cases[] = {
      {"batch", SCHED_BATCH}, {"normal", SCHED_OTHER}, {"keep", ::sched_getscheduler(0)}};
  for (const auto& [flag, expected] : cases) {
    start({"--cpu-policy", flag});
    const auto policies = thread_policies(gateway->pid());
    EXPECT_GT(policies.size(), 4U) << flag;  // io, actor workers, writers, registry...
    EXPECT_EQ(std::count(policies.begin(), policies.end(), expected),
              static_cast<std::ptrdiff_t>(policies.size()))
        << flag;
    gateway->signal(SIGTERM);
    ASSERT_EQ(gateway->wait(), 0) << flag;
  }
}

/// Everything the gateway process wrote to its log so far.
std::string read_log() {
  std::ifstream in(::testing::TempDir() + "/gateway.log");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Whether process `pid` has a shared object whose path contains `name` mapped.
bool maps_library(int pid, std::string_view name) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

TEST_F(Gateway, RunsOnTheAllocatorItWasBuiltWithAndSaysWhichAtStartUp) {
  start();
  // The log file is shared by every gateway test and appended to: find this gateway's
  // line by its port.
  const std::string mine = "listening on 127.0.0.1:" + std::to_string(port) + " ";
  ASSERT_TRUE(eventually([&] { return read_log().find(mine) != std::string::npos; }));
  const std::string log = read_log();
  const std::string line = log.substr(log.find(mine));
  const std::string said = line.substr(0, line.find('\n'));
  if (TGW_WITH_JEMALLOC) {
    EXPECT_TRUE(maps_library(gateway->pid(), "libjemalloc"));
    EXPECT_NE(said.find(", jemalloc 5."), std::string::npos) << said;
  } else {
    EXPECT_FALSE(maps_library(gateway->pid(), "libjemalloc"));
    EXPECT_NE(said.find(", system malloc"), std::string::npos) << said;
  }
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
}

TEST_F(Gateway, SigtermDrainsAndExitsZero) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(packet(1, 1'700'000'000'000));
  ASSERT_EQ(d.receive(4), ack(1));
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
  EXPECT_TRUE(d.closed_by_server());
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "0");
}

TEST_F(Gateway, BadFlagsAndUnreachableRedisAreClearErrors) {
  child_process bad({TGW_BINARY, "serve", "--crc", "sometimes"}, ::testing::TempDir() + "/bad.log");
  EXPECT_EQ(bad.wait(), 2);
  child_process bad_policy({TGW_BINARY, "serve", "--cpu-policy", "fast"},
                           ::testing::TempDir() + "/bad-policy.log");
  EXPECT_EQ(bad_policy.wait(), 2);
  auto said = [](const std::string& log) {
    std::ifstream in(log);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  // Key shards are a cluster's: a single node refuses them.
  const std::string shards_log = ::testing::TempDir() + "/shards.log";
  child_process shards_on_node({TGW_BINARY, "serve", "--redis", "redis://127.0.0.1:1",
                                "--telemetry-shards", "4", "--port", "0", "--metrics-addr", ""},
                               shards_log);
  EXPECT_EQ(shards_on_node.wait(), 2);
  EXPECT_NE(said(shards_log).find("--telemetry-shards: only a Redis Cluster"), std::string::npos)
      << said(shards_log);
  if (!backend.on_cluster()) {
    // A cluster URL naming a node that is not in cluster mode.
    const std::string log = ::testing::TempDir() + "/not-cluster.log";
    child_process not_cluster({TGW_BINARY, "serve", "--redis",
                               "redis+cluster://127.0.0.1:" + std::to_string(server().port()),
                               "--port", "0", "--metrics-addr", ""},
                              log);
    EXPECT_EQ(not_cluster.wait(), 1);
    EXPECT_NE(said(log).find("is not a cluster node"), std::string::npos) << said(log);
  }
  child_process unreachable(
      {TGW_BINARY, "serve", "--redis", "redis://127.0.0.1:" + std::to_string(free_port()), "--port",
       "0", "--metrics-addr", ""},
      ::testing::TempDir() + "/unreachable.log");
  EXPECT_EQ(unreachable.wait(), 1);
}

}  // namespace
}  // namespace tgw::test::gateway_suite
