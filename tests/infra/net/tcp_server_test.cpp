// The TCP server's connection life cycle where it races shutdown: every listener it
// makes hears of its connection's close exactly once, even when close_all() gets to the
// connection before the listener does.
#include "infra/net/tcp_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using tgw::infra::net::connection_listener;
using tgw::infra::net::device_link;
using tgw::infra::net::io_pool;
using tgw::infra::net::tcp_server;

struct listener_log {
  std::mutex mutex;
  std::vector<std::string> closes;
  std::atomic<int> frames{0};
};

class recording_listener final : public connection_listener {
 public:
  explicit recording_listener(listener_log& log) : log_(log) {}
  void on_frame(const tgw::codecs::frame&) override { ++log_.frames; }
  void on_closed(const std::string& reason) override {
    const std::lock_guard lock(log_.mutex);
    log_.closes.push_back(reason);
  }

 private:
  listener_log& log_;
};

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::vector<std::string> closes_within(listener_log& log, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    {
      const std::lock_guard lock(log.mutex);
      if (!log.closes.empty()) break;
    }
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(50ms);  // a second close would have come by now
  const std::lock_guard lock(log.mutex);
  return log.closes;
}

TEST(TcpServer, AConnectionClosedBeforeItsListenerArrivesStillTellsTheListener) {
  io_pool pool(1);
  listener_log log;
  std::unique_ptr<tcp_server> server;
  // The factory runs between the accept and the listener's hand-over to the connection:
  // closing everything from inside it is the shutdown that races a new device.
  server = std::make_unique<tcp_server>(
      pool, tgw::infra::net::tcp::endpoint{tgw::infra::net::asio::ip::make_address("127.0.0.1"), 0},
      tgw::infra::net::connection_limits{}, [&](std::shared_ptr<device_link>) {
        server->close_all("shutdown");
        return std::make_unique<recording_listener>(log);
      });
  server->start();
  pool.start();
  const int fd = connect_to(server->port());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(closes_within(log, 5s), std::vector<std::string>{"shutdown"});
  EXPECT_EQ(log.frames.load(), 0);
  ::close(fd);
  pool.stop();
  pool.join();
}

TEST(TcpServer, ADeviceThatHangsUpIsReportedOnce) {
  io_pool pool(1);
  listener_log log;
  tcp_server server(
      pool, tgw::infra::net::tcp::endpoint{tgw::infra::net::asio::ip::make_address("127.0.0.1"), 0},
      tgw::infra::net::connection_limits{},
      [&](std::shared_ptr<device_link>) { return std::make_unique<recording_listener>(log); });
  server.start();
  pool.start();
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(closes_within(log, 5s), std::vector<std::string>{"peer closed"});
  server.close_all("shutdown");  // already gone: no second report
  EXPECT_EQ(closes_within(log, 200ms), std::vector<std::string>{"peer closed"});
  pool.stop();
  pool.join();
}

}  // namespace
