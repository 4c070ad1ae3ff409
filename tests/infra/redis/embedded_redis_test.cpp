// The private redis-server of `tgw serve` without --redis: it comes up on a unix
// socket in the data directory, answers, keeps the normal CPU policy whatever the
// gateway runs with, stops with its owner, and a missing binary is a clear error.
#include "infra/redis/embedded_redis.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "infra/process/cpu_policy.hpp"
#include "infra/redis/connection.hpp"

namespace {

using namespace std::chrono_literals;
using tgw::infra::redis::connection;
using tgw::infra::redis::embedded_redis;

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/embedded-" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(EmbeddedRedis, AnswersOnItsUnixSocketAndStopsWithItsOwner) {
  const std::string dir = fresh_dir("lifecycle");
  std::string socket;
  {
    embedded_redis server(dir);
    socket = server.where().unix_socket;
    EXPECT_EQ(socket, std::filesystem::absolute(dir).string() + "/redis.sock");
    connection c({server.where(), 500ms, 1000ms, "embedded-test"});
    EXPECT_EQ(c.command({"PING"}).text, "PONG");
    EXPECT_EQ(c.command({"CONFIG", "GET", "appendonly"}).elements.at(1).text, "yes");
    EXPECT_TRUE(server.running());
  }
  tgw::infra::redis::endpoint gone;
  gone.unix_socket = socket;
  connection after({gone, 200ms, 200ms, "after"});
  EXPECT_NE(after.command({"PING"}).text, "PONG");
}

TEST(EmbeddedRedis, KeepsTheNormalCpuPolicyUnderABatchGateway) {
  int server_policy = -1;
  std::string error;
  std::thread gateway([&] {
    error = tgw::infra::process::apply_cpu_policy(tgw::infra::process::cpu_policy::batch);
    embedded_redis server(fresh_dir("policy"));
    server_policy = ::sched_getscheduler(server.pid());
  });
  gateway.join();
  ASSERT_EQ(error, "");
  EXPECT_EQ(server_policy, SCHED_OTHER);
}

TEST(EmbeddedRedis, ItsDataDirHoldsOneServerAtATime) {
  const std::string dir = fresh_dir("locked");
  {
    embedded_redis first(dir);
    try {
      embedded_redis second(dir);
      ADD_FAILURE() << "a second server started on " << dir;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("in use by another tgw serve (pid " +
                                           std::to_string(::getpid()) + ")"),
                std::string::npos)
          << e.what();
    }
    connection c({first.where(), 500ms, 1000ms, "embedded-test"});
    EXPECT_EQ(c.command({"PING"}).text, "PONG");
  }
  // Released with the first server: the directory is usable again.
  embedded_redis again(dir);
  EXPECT_TRUE(again.running());
}

TEST(EmbeddedRedis, AMissingBinaryIsAClearError) {
  ::setenv("TGW_REDIS_SERVER", "/nonexistent/redis-server", 1);
  try {
    embedded_redis server(fresh_dir("missing"));
    ADD_FAILURE() << "started without a binary";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/redis-server"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("not an executable"), std::string::npos) << e.what();
  }
  ::unsetenv("TGW_REDIS_SERVER");
}

TEST(EmbeddedRedis, ADataDirTooLongForItsSocketIsAClearError) {
  const std::string dir = fresh_dir(std::string(100, 'd'));
  try {
    embedded_redis server(dir);
    ADD_FAILURE() << "started with a socket path the kernel cannot bind";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("too long for the private Redis's socket"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("choose a shorter --data-dir"), std::string::npos)
        << e.what();
  }
  // Nothing was started.
  EXPECT_FALSE(std::filesystem::exists(dir + "/redis.sock"));
}

}  // namespace
