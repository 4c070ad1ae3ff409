// What a device connection lets a peer spend before and after its IMEI: only the IMEI
// may come first, keepalives are counted where they arrive, a peer that never reads is
// cut off, and the per-address limits hold for loopback too unless it is trusted.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "infra/metrics/refusals.hpp"
#include "infra/net/address_limits.hpp"
#include "infra/net/tcp_server.hpp"
#include "tests/support/test_device.hpp"

namespace {

using namespace std::chrono_literals;
using tgw::infra::metrics::refusal;
using tgw::infra::metrics::refusal_counters;
using tgw::infra::net::connection_limits;
using tgw::infra::net::io_pool;
using tgw::infra::net::listener_security;
using tgw::infra::net::tcp_server;
using tgw::ports::connection_listener;
using tgw::ports::device_link;
using tgw::test::connect_loopback;

const std::vector<std::uint8_t> imei_frame = {0x00, 0x0F, '3', '5', '6', '3', '0', '7', '0',
                                              '4',  '2',  '4', '4', '1', '0', '1', '3'};

std::vector<std::uint8_t> avl_frame(std::size_t body) {
  // Sized once and filled by index: GCC 12 at -O3 misreads a chain of inserts as an overflow.
  std::vector<std::uint8_t> f(8 + body + 4, 7);
  std::fill_n(f.begin(), 7, std::uint8_t{0});
  f[7] = static_cast<std::uint8_t>(body);
  f[8] = 0x8E;
  const std::size_t crc = 8 + body;
  f[crc] = 0;
  f[crc + 1] = 0;
  f[crc + 2] = 0x12;
  f[crc + 3] = 0x34;
  return f;
}

// What the connections of one test did: frames by kind, closes with their reasons.
struct seen {
  std::mutex mutex;
  std::vector<tgw::codecs::frame_kind> frames;
  std::vector<std::string> closes;

  std::vector<std::string> closes_within(std::chrono::milliseconds limit, std::size_t n = 1) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      {
        const std::lock_guard lock(mutex);
        if (closes.size() >= n) break;
      }
      std::this_thread::sleep_for(5ms);
    }
    const std::lock_guard lock(mutex);
    return closes;
  }
};

// A session stand-in: finishes every frame at once, and answers each AVL frame with
// `answer` bytes (an ACK, or more).
class answering_listener final : public connection_listener {
 public:
  answering_listener(std::shared_ptr<device_link> link, seen& log, std::size_t answer)
      : link_(std::move(link)), log_(log), answer_(answer) {}
  void on_frame(const tgw::codecs::frame& f) override {
    {
      const std::lock_guard lock(log_.mutex);
      log_.frames.push_back(f.kind);
    }
    if (f.kind == tgw::codecs::frame_kind::avl && answer_ > 0)
      link_->answer_frame(std::vector<std::uint8_t>(answer_, 1));
    else
      link_->frame_done();
  }
  void on_closed(const std::string& reason) override {
    const std::lock_guard lock(log_.mutex);
    log_.closes.push_back(reason);
  }

 private:
  std::shared_ptr<device_link> link_;
  seen& log_;
  std::size_t answer_;
};

struct server_under_test {
  explicit server_under_test(connection_limits limits = {}, listener_security security = {},
                             std::size_t answer = 4)
      : pool(1) {
    security.refusals = refusals;
    server = std::make_unique<tcp_server>(
        pool,
        tgw::infra::net::tcp::endpoint{tgw::infra::net::asio::ip::make_address("127.0.0.1"), 0},
        limits,
        [this, answer](std::shared_ptr<device_link> link) {
          return std::make_unique<answering_listener>(std::move(link), log, answer);
        },
        nullptr, std::move(security));
    server->start();
    pool.start();
  }
  ~server_under_test() {
    server->close_all("shutdown");
    pool.stop();
    pool.join();
  }
  io_pool pool;
  seen log;
  std::shared_ptr<refusal_counters> refusals = std::make_shared<refusal_counters>();
  std::unique_ptr<tcp_server> server;
};

void send_all(int fd, const std::vector<std::uint8_t>& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
}

TEST(TcpServerBudgets, AKeepaliveBeforeTheImeiClosesTheConnection) {
  server_under_test s;
  const int fd = connect_loopback(s.server->port());
  ASSERT_GE(fd, 0);
  send_all(fd, std::vector<std::uint8_t>(4096, 0xFF));
  const auto closes = s.log.closes_within(5s);
  ASSERT_EQ(closes.size(), 1U);
  EXPECT_NE(closes[0].find("before the IMEI"), std::string::npos) << closes[0];
  EXPECT_EQ((*s.refusals)[refusal::before_imei], 1U);
  const std::lock_guard lock(s.log.mutex);
  EXPECT_TRUE(s.log.frames.empty());  // nothing reached the session
  ::close(fd);
}

TEST(TcpServerBudgets, KeepalivesAfterTheImeiAreCountedAndNeverDelivered) {
  server_under_test s;
  const int fd = connect_loopback(s.server->port());
  ASSERT_GE(fd, 0);
  send_all(fd, imei_frame);
  send_all(fd, std::vector<std::uint8_t>(10'000, 0xFF));
  send_all(fd, avl_frame(40));
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (s.server->counters().keepalives.load() < 10'000 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(s.server->counters().keepalives.load(), 10'000U);
  std::this_thread::sleep_for(50ms);
  {
    const std::lock_guard lock(s.log.mutex);
    EXPECT_EQ(s.log.frames, (std::vector<tgw::codecs::frame_kind>{tgw::codecs::frame_kind::imei,
                                                                  tgw::codecs::frame_kind::avl}));
    EXPECT_TRUE(s.log.closes.empty());
  }
  ::close(fd);
}

// A peer that sends packets and never reads their answers: once the kernel's buffers
// are full, what it is owed waits in the connection, up to its bound.
TEST(TcpServerBudgets, APeerThatNeverReadsIsCutOffAtItsWriteQueue) {
  connection_limits limits;
  limits.max_write_queue_writes = 16;
  server_under_test s(limits, {}, 4096);  // 4 KiB owed per frame
  const int fd = connect_loopback(s.server->port());
  ASSERT_GE(fd, 0);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  send_all(fd, imei_frame);
  const auto frame = avl_frame(40);
  for (int i = 0; i < 20'000; ++i) {
    if (::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) break;
    const std::lock_guard lock(s.log.mutex);
    if (!s.log.closes.empty()) break;
  }
  const auto closes = s.log.closes_within(10s);
  ASSERT_EQ(closes.size(), 1U);
  EXPECT_NE(closes[0].find("reads nothing"), std::string::npos) << closes[0];
  EXPECT_EQ((*s.refusals)[refusal::write_queue], 1U);
  ::close(fd);
}

// No source is exempt for being loopback: only what is trusted by name.
TEST(TcpServerBudgets, LoopbackIsLimitedLikeAnyAddressUnlessTrusted) {
  for (const bool trusted : {false, true}) {
    listener_security security;
    tgw::infra::net::address_limit_settings settings;
    settings.handshakes = 2;
    security.limits = std::make_shared<tgw::infra::net::address_limits>(settings);
    if (trusted) {
      std::string error;
      security.trusted = *tgw::infra::net::parse_prefixes("127.0.0.0/8", error);
    }
    server_under_test s({}, security);
    std::vector<int> fds;
    for (int i = 0; i < 3; ++i) fds.push_back(connect_loopback(s.server->port()));
    // A refused connection is closed before it has a listener: its count tells.
    const auto end = std::chrono::steady_clock::now() + (trusted ? 300ms : 5s);
    while ((*s.refusals)[refusal::address_handshakes] == 0 &&
           std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(5ms);
    EXPECT_EQ((*s.refusals)[refusal::address_handshakes], trusted ? 0U : 1U);
    EXPECT_EQ(s.server->counters().refused_address.load(), trusted ? 0U : 1U);
    for (const int fd : fds) ::close(fd);
  }
}

TEST(TcpServerBudgets, AnAddressHoldsAtMostItsSessions) {
  listener_security security;
  tgw::infra::net::address_limit_settings settings;
  settings.sessions = 2;
  security.limits = std::make_shared<tgw::infra::net::address_limits>(settings);
  server_under_test s({}, security);
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) {
    fds.push_back(connect_loopback(s.server->port()));
    send_all(fds.back(), imei_frame);
  }
  const auto closes = s.log.closes_within(5s);
  ASSERT_EQ(closes.size(), 1U);
  EXPECT_NE(closes[0].find("--per-address-sessions"), std::string::npos) << closes[0];
  EXPECT_EQ((*s.refusals)[refusal::address_sessions], 1U);
  // A session that ends gives its place back.
  ::close(fds[0]);
  ASSERT_EQ(s.log.closes_within(5s, 2).size(), 2U);
  fds.push_back(connect_loopback(s.server->port()));
  send_all(fds.back(), imei_frame);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(s.log.closes_within(0ms).size(), 2U);
  for (std::size_t i = 1; i < fds.size(); ++i) ::close(fds[i]);
}

// Out of descriptors, accept() fails: the listener pauses and tries again rather than
// spinning on the error, and takes the waiting connection once descriptors are back.
TEST(TcpServerBudgets, AcceptingPausesWhileDescriptorsRunOutAndResumes) {
  server_under_test s;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  // Every descriptor the process may still open is taken (under a soft limit lowered for
  // the test), then the device connects: the kernel completes the connection, and the
  // gateway has no descriptor for it.
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit low = before;
  low.rlim_cur = std::min<rlim_t>(before.rlim_cur, 4096);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> filler;
  for (int f = 0; (f = ::open("/dev/null", O_RDONLY)) >= 0;) filler.push_back(f);
  ASSERT_EQ(errno, EMFILE);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(s.server->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto end = std::chrono::steady_clock::now() + 5s;
  while (s.server->counters().accept_failures.load() == 0 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  EXPECT_GT(s.server->counters().accept_failures.load(), 0U);
  EXPECT_EQ(s.server->counters().accepted.load(), 0U);
  for (const int f : filler) ::close(f);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &before), 0);
  end = std::chrono::steady_clock::now() + 5s;
  while (s.server->counters().accepted.load() == 0 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(s.server->counters().accepted.load(), 1U);
  // A pause per failure: in the half second it lasted, a handful of tries, not a spin.
  EXPECT_LT(s.server->counters().accept_failures.load(), 100U);
  ::close(fd);
}

}  // namespace
