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

#include "tests/support/test_device.hpp"

namespace {

using namespace std::chrono_literals;
using tgw::infra::net::io_pool;
using tgw::infra::net::tcp_server;
using tgw::ports::connection_listener;
using tgw::ports::device_link;
using tgw::test::connect_loopback;

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
  const int fd = connect_loopback(server->port());
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
  const int fd = connect_loopback(server.port());
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(closes_within(log, 5s), std::vector<std::string>{"peer closed"});
  server.close_all("shutdown");  // already gone: no second report
  EXPECT_EQ(closes_within(log, 200ms), std::vector<std::string>{"peer closed"});
  pool.stop();
  pool.join();
}

/// Keeps every frame's bytes and finishes each frame at once, as a session would
/// after its ACK.
class collecting_listener final : public connection_listener {
 public:
  collecting_listener(std::shared_ptr<device_link> link, listener_log& log,
                      std::vector<std::vector<std::uint8_t>>& frames)
      : link_(std::move(link)), log_(log), frames_(frames) {}
  void on_frame(const tgw::codecs::frame& f) override {
    {
      const std::lock_guard lock(log_.mutex);
      frames_.emplace_back(f.bytes.begin(), f.bytes.end());
    }
    ++log_.frames;
    link_->frame_done();
  }
  void on_closed(const std::string& reason) override {
    const std::lock_guard lock(log_.mutex);
    log_.closes.push_back(reason);
  }

 private:
  std::shared_ptr<device_link> link_;
  listener_log& log_;
  std::vector<std::vector<std::uint8_t>>& frames_;
};

/// A Codec 8 Extended frame as the framer sees it: preamble, length, `body` bytes
/// starting with the codec id, and a CRC field.
std::vector<std::uint8_t> avl_frame(std::size_t body, std::uint8_t fill) {
  std::vector<std::uint8_t> f = {0, 0, 0, 0};
  for (int shift = 24; shift >= 0; shift -= 8)
    f.push_back(static_cast<std::uint8_t>(body >> shift));
  f.push_back(0x8E);
  f.insert(f.end(), body - 1, fill);
  f.insert(f.end(), {0, 0, 0x12, 0x34});
  return f;
}

// Idle connections wait with a read into a small landing area; a frame larger than it,
// several frames in one segment, and a frame dripped a byte at a time all arrive whole.
TEST(TcpServer, FramesOfEverySizeAndSegmentationArriveWhole) {
  io_pool pool(1);
  listener_log log;
  std::vector<std::vector<std::uint8_t>> frames;
  tcp_server server(
      pool, tgw::infra::net::tcp::endpoint{tgw::infra::net::asio::ip::make_address("127.0.0.1"), 0},
      tgw::infra::net::connection_limits{}, [&](std::shared_ptr<device_link> link) {
        return std::make_unique<collecting_listener>(std::move(link), log, frames);
      });
  server.start();
  pool.start();
  const int fd = connect_loopback(server.port());
  ASSERT_GE(fd, 0);
  std::vector<std::vector<std::uint8_t>> sent;
  sent.push_back(
      {0x00, 0x0F, '3', '5', '6', '3', '0', '7', '0', '4', '2', '4', '4', '1', '0', '1', '3'});
  for (const std::size_t body : {40U, 127U, 128U, 600U, 3000U})
    sent.push_back(avl_frame(body, static_cast<std::uint8_t>(body)));
  std::vector<std::uint8_t> burst;  // everything but the last frame in one write
  for (std::size_t i = 0; i + 1 < sent.size(); ++i)
    burst.insert(burst.end(), sent[i].begin(), sent[i].end());
  ASSERT_EQ(::send(fd, burst.data(), burst.size(), 0), static_cast<ssize_t>(burst.size()));
  // The last frame a byte at a time, the first bytes apart so they arrive apart.
  const std::vector<std::uint8_t>& dripped = sent.back();
  for (std::size_t i = 0; i < dripped.size(); ++i) {
    ASSERT_EQ(::send(fd, &dripped[i], 1, 0), 1);
    if (i < 20) std::this_thread::sleep_for(1ms);
  }
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (log.frames.load() < static_cast<int>(sent.size()) &&
         std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  {
    const std::lock_guard lock(log.mutex);
    EXPECT_EQ(frames, sent);
    EXPECT_TRUE(log.closes.empty());
  }
  ::close(fd);
  EXPECT_EQ(closes_within(log, 5s), std::vector<std::string>{"peer closed"});
  server.close_all("shutdown");
  pool.stop();
  pool.join();
}

const std::vector<std::uint8_t> imei_frame = {0x00, 0x0F, '3', '5', '6', '3', '0', '7', '0',
                                              '4',  '2',  '4', '4', '1', '0', '1', '3'};

/// A listener that keeps the reason each of several connections closed with, by the
/// order they were accepted in.
struct close_board {
  std::mutex mutex;
  std::vector<std::string> reasons;  // "" while open
};

class board_listener final : public connection_listener {
 public:
  board_listener(std::shared_ptr<device_link> link, close_board& board, std::size_t index)
      : link_(std::move(link)), board_(board), index_(index) {}
  void on_frame(const tgw::codecs::frame&) override { link_->frame_done(); }
  void on_closed(const std::string& reason) override {
    const std::lock_guard lock(board_.mutex);
    board_.reasons[index_] = reason;
  }

 private:
  std::shared_ptr<device_link> link_;
  close_board& board_;
  std::size_t index_;
};

tgw::infra::net::tcp::endpoint loopback() {
  return {tgw::infra::net::asio::ip::make_address("127.0.0.1"), 0};
}

// Deadlines are kept by one sweep per io thread, not a timer per connection. Bytes that
// never make an IMEI do not push the handshake's deadline back: it counts from the start.
TEST(TcpServer, AHandshakeDrippedAByteAtATimeStillEndsAtItsDeadline) {
  io_pool pool(1);
  listener_log log;
  tgw::infra::net::connection_limits limits;
  limits.handshake_timeout = 300ms;
  tcp_server server(pool, loopback(), limits, [&](std::shared_ptr<device_link>) {
    return std::make_unique<recording_listener>(log);
  });
  server.start();
  pool.start();
  const int fd = connect_loopback(server.port());
  ASSERT_GE(fd, 0);
  // The IMEI frame's bytes 100 ms apart, the last one never: 1.6 s of a device that
  // never finishes. The server closes it while it drips.
  std::size_t dripped = 0;
  for (; dripped + 1 < imei_frame.size(); ++dripped) {
    {
      const std::lock_guard lock(log.mutex);
      if (!log.closes.empty()) break;
    }
    if (::send(fd, &imei_frame[dripped], 1, MSG_NOSIGNAL) != 1) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_LT(dripped, imei_frame.size() - 1);
  EXPECT_EQ(closes_within(log, 5s), std::vector<std::string>{"handshake timeout"});
  ::close(fd);
  pool.stop();
  pool.join();
}

// Two devices on one io thread, so one sweep: the one that keeps sending stays, the
// silent one is closed for being idle, and only it.
TEST(TcpServer, OnlyTheSilentDeviceOfTwoOnOneThreadIsClosedForIdling) {
  io_pool pool(1);
  close_board board;
  board.reasons.resize(2);
  std::atomic<std::size_t> accepted{0};
  tgw::infra::net::connection_limits limits;
  limits.idle_timeout = 500ms;
  tcp_server server(pool, loopback(), limits, [&](std::shared_ptr<device_link> link) {
    return std::make_unique<board_listener>(std::move(link), board, accepted++);
  });
  server.start();
  pool.start();
  const int busy = connect_loopback(server.port());
  ASSERT_GE(busy, 0);
  ASSERT_EQ(::send(busy, imei_frame.data(), imei_frame.size(), 0),
            static_cast<ssize_t>(imei_frame.size()));
  while (accepted.load() < 1) std::this_thread::sleep_for(5ms);
  const int silent = connect_loopback(server.port());
  ASSERT_GE(silent, 0);
  ASSERT_EQ(::send(silent, imei_frame.data(), imei_frame.size(), 0),
            static_cast<ssize_t>(imei_frame.size()));
  // The busy one sends a frame every 100 ms for 1.5 s, three idle timeouts.
  const auto frame = avl_frame(40, 1);
  for (int i = 0; i < 15; ++i) {
    ASSERT_EQ(::send(busy, frame.data(), frame.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(frame.size()));
    std::this_thread::sleep_for(100ms);
  }
  {
    const std::lock_guard lock(board.mutex);
    EXPECT_EQ(board.reasons, (std::vector<std::string>{"", "idle timeout"}));
  }
  ::close(busy);
  ::close(silent);
  server.close_all("shutdown");
  pool.stop();
  pool.join();
}

// The sweeps belong to the server; destroyed while its io thread runs and devices are
// connected, it leaves nothing that fires into it later.
TEST(TcpServer, AServerDestroyedWithOpenConnectionsLeavesItsIoThreadRunning) {
  io_pool pool(1);
  listener_log log;
  tgw::infra::net::connection_limits limits;
  limits.handshake_timeout = 80ms;  // a sweep every 10 ms
  auto server = std::make_unique<tcp_server>(
      pool, loopback(), limits,
      [&](std::shared_ptr<device_link>) { return std::make_unique<recording_listener>(log); });
  server->start();
  pool.start();
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) fds.push_back(connect_loopback(server->port()));
  std::this_thread::sleep_for(30ms);
  server->close_all("shutdown");
  server.reset();
  std::this_thread::sleep_for(200ms);  // past the deadlines, and many sweep periods
  // The io thread still serves other work.
  std::atomic<bool> ran{false};
  tgw::infra::net::asio::post(pool.front(), [&] { ran = true; });
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (!ran.load() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(ran.load());
  for (const int fd : fds) ::close(fd);
  pool.stop();
  pool.join();
}

// A connection that sends nothing is closed at the first-byte deadline, long before
// the handshake's; one that has begun its IMEI is not.
TEST(TcpServer, OnlyAConnectionThatSentNothingIsClosedAtTheFirstByteDeadline) {
  io_pool pool(1);
  close_board board;
  board.reasons.resize(2);
  std::atomic<std::size_t> accepted{0};
  tgw::infra::net::connection_limits limits;
  limits.first_byte_timeout = 200ms;
  limits.handshake_timeout = 60s;
  tcp_server server(pool, loopback(), limits, [&](std::shared_ptr<device_link> link) {
    return std::make_unique<board_listener>(std::move(link), board, accepted++);
  });
  server.start();
  pool.start();
  const int speaking = connect_loopback(server.port());
  ASSERT_GE(speaking, 0);
  ASSERT_EQ(::send(speaking, imei_frame.data(), 1, 0), 1);
  while (accepted.load() < 1) std::this_thread::sleep_for(5ms);
  const int silent = connect_loopback(server.port());
  ASSERT_GE(silent, 0);
  const auto end = std::chrono::steady_clock::now() + 5s;
  auto silent_closed = [&] {
    const std::lock_guard lock(board.mutex);
    return !board.reasons[1].empty();
  };
  while (!silent_closed() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  {
    const std::lock_guard lock(board.mutex);
    EXPECT_EQ(board.reasons,
              (std::vector<std::string>{"", "first-byte timeout (the device sent nothing)"}));
  }
  ::close(speaking);
  ::close(silent);
  server.close_all("shutdown");
  pool.stop();
  pool.join();
}

// With PROXY protocol on, only a balancer may connect: a peer outside --proxy-from is
// closed before a byte of it is read, and counted; from a balancer the same bytes are
// a device.
TEST(TcpServer, WithProxyProtocolOnlyABalancersConnectionIsRead) {
  std::string error;
  for (const char* balancers : {"10.0.0.0/8,::1/128", "127.0.0.1"}) {
    io_pool pool(1);
    listener_log log;
    tgw::infra::net::listener_security security;
    security.proxy = tgw::infra::net::proxy_mode::v1;
    security.proxy_from = *tgw::infra::net::parse_prefixes(balancers, error);
    tcp_server server(
        pool, loopback(), tgw::infra::net::connection_limits{},
        [&](std::shared_ptr<device_link>) { return std::make_unique<recording_listener>(log); },
        nullptr, security);
    server.start();
    pool.start();
    const int fd = connect_loopback(server.port());
    ASSERT_GE(fd, 0);
    const std::string header = "PROXY TCP4 198.51.100.7 10.0.0.5 40123 5027\r\n";
    ASSERT_EQ(::send(fd, header.data(), header.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(header.size()));
    // A header from outside --proxy-from is refused: the server may have closed the
    // connection already, so this send may fail; what counts is below.
    (void)::send(fd, imei_frame.data(), imei_frame.size(), MSG_NOSIGNAL);
    const bool from_balancer = std::string(balancers) == "127.0.0.1";
    if (from_balancer) {
      const auto end = std::chrono::steady_clock::now() + 5s;
      while (log.frames.load() < 1 && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(5ms);
      EXPECT_EQ(log.frames.load(), 1);
    } else {
      std::uint8_t b = 0;
      EXPECT_LE(::recv(fd, &b, 1, 0), 0) << "closed, not answered";
      EXPECT_EQ(log.frames.load(), 0);
    }
    EXPECT_EQ(server.counters().refused_proxy_source.load(), from_balancer ? 0U : 1U) << balancers;
    ::close(fd);
    server.close_all("shutdown");
    pool.stop();
    pool.join();
  }
}

}  // namespace
