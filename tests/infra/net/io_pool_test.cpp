#include "infra/net/io_pool.hpp"

#include <array>
#include <future>
#include <string>

#include <gtest/gtest.h>
#include <pthread.h>

namespace {

using tgw::infra::net::io_pool;

std::string name_of_the_thread_that_runs(tgw::infra::net::asio::io_context& io) {
  std::promise<std::string> name;
  tgw::infra::net::asio::post(io, [&name] {
    std::array<char, 16> buffer{};
    ::pthread_getname_np(::pthread_self(), buffer.data(), buffer.size());
    name.set_value(buffer.data());
  });
  return name.get_future().get();
}

// Operators and scripts/bench-cost tell the sockets' CPU from the actors' by it.
TEST(IoPool, EveryThreadIsNamedForItsJob) {
  io_pool pool(2);
  pool.start();
  EXPECT_EQ(name_of_the_thread_that_runs(pool.at(0)), "tgw.io");
  EXPECT_EQ(name_of_the_thread_that_runs(pool.at(1)), "tgw.io");
  pool.stop();
  pool.join();
}

}  // namespace
