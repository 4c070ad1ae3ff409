// tls_channel against OpenSSL itself as the peer, over a socket pair: OpenSSL carries
// every record, driven on a non-blocking socket through the channel's own BIO, one
// receive from the socket a call.

#include "infra/net/tls_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "infra/net/tls_context.hpp"
#include "tests/support/tls_device.hpp"

namespace tgw::infra::net {
namespace {

std::vector<std::uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

// Built by push_back: GCC 12 at -O3 takes the indexed form, inlined, for a write past
// the end (-Wstringop-overflow).
std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(i * 31 + 7));
  return out;
}

void wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  ::poll(&p, 1, 20);
}

// Loops that wait for the peer give up after this many waits (about 2 s), so that a
// broken session fails its test rather than hanging it.
constexpr int patience = 100;

// The certificate files, made once for the whole binary.
const test::pem_files& server_certificate() {
  static const test::pem_files files = [] {
    const std::string dir = ::testing::TempDir();
    const test::pem_files ca = test::make_ca(dir, "tls-channel-ca");
    return test::make_signed(dir, "tls-channel-server", ca, 2);
  }();
  return files;
}

struct peer_choice {
  int version = TLS1_3_VERSION;
  std::string cipher;  ///< TLS 1.2 cipher list or TLS 1.3 suite; empty: the default.
};

// An OpenSSL client and a tls_channel server on the two ends of a socket pair.
class session_pair {
 public:
  explicit session_pair(const peer_choice& choice) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) throw std::runtime_error("socketpair");
    server_fd_ = fds[0];
    client_fd_ = fds[1];
    ::fcntl(server_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(client_fd_, F_SETFL, O_NONBLOCK);
    tls_settings settings;
    settings.cert_file = server_certificate().cert;
    settings.key_file = server_certificate().key;
    std::string error;
    context_ = tls_server_context::load(settings, error);
    if (!context_) throw std::runtime_error(error);
    server_ = std::make_unique<tls_channel>(*context_, server_fd_);

    client_ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(client_ctx_, choice.version);
    SSL_CTX_set_max_proto_version(client_ctx_, choice.version);
    if (!choice.cipher.empty()) {
      if (choice.version == TLS1_3_VERSION)
        SSL_CTX_set_ciphersuites(client_ctx_, choice.cipher.c_str());
      else
        SSL_CTX_set_cipher_list(client_ctx_, choice.cipher.c_str());
    }
    client_ = SSL_new(client_ctx_);
    SSL_set_fd(client_, client_fd_);
    SSL_set_connect_state(client_);
  }
  ~session_pair() {
    server_.reset();
    SSL_free(client_);
    SSL_CTX_free(client_ctx_);
    ::close(server_fd_);
    if (client_fd_ >= 0) ::close(client_fd_);
  }
  session_pair(const session_pair&) = delete;
  session_pair& operator=(const session_pair&) = delete;

  /// Both handshakes, alternating; false if either failed.
  bool handshake() {
    bool server_done = false;
    bool client_done = false;
    for (int round = 0; round < patience && !(server_done && client_done); ++round) {
      if (!server_done) {
        std::string error;
        const tls_result r = server_->handshake(error);
        if (r.status == tls_status::done) server_done = true;
        if (r.status == tls_status::failed || r.status == tls_status::closed) return false;
      }
      if (!client_done) {
        ERR_clear_error();
        const int r = SSL_do_handshake(client_);
        if (r == 1) {
          client_done = true;
        } else {
          const int e = SSL_get_error(client_, r);
          if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return false;
        }
      }
      if (!(server_done && client_done)) wait_readable(round % 2 == 0 ? server_fd_ : client_fd_);
    }
    return server_done && client_done;
  }

  /// The client writes `b` whole (OpenSSL: one record per 16 KiB).
  void client_send(const std::vector<std::uint8_t>& b) {
    std::size_t done = 0;
    for (int i = 0; i < patience && done < b.size(); ++i) {
      const int r = SSL_write(client_, b.data() + done, static_cast<int>(b.size() - done));
      if (r > 0) {
        done += static_cast<std::size_t>(r);
        continue;
      }
      // The pair's buffer is full: let the server read some.
      drain_server_into(pending_);
    }
  }

  /// What the server reads until it has `n` bytes, or a failure or close.
  std::vector<std::uint8_t> server_receive(std::size_t n, tls_status* last = nullptr,
                                           std::string* error = nullptr) {
    std::vector<std::uint8_t> out = std::move(pending_);
    pending_.clear();
    tls_status status = tls_status::done;
    std::string why;
    for (int waits = 0; waits < patience && out.size() < n;) {
      std::vector<std::uint8_t> space(1000);
      const tls_result r = server_->read(space, why);
      status = r.status;
      if (r.status == tls_status::done) {
        out.insert(out.end(), space.begin(), space.begin() + static_cast<std::ptrdiff_t>(r.bytes));
      } else if (r.status == tls_status::want_read) {
        server_->release_buffers();
        wait_readable(server_fd_);
        ++waits;
      } else {
        break;
      }
    }
    if (last != nullptr) *last = status;
    if (error != nullptr) *error = why;
    return out;
  }

  /// The server writes `b`, repeating with the same bytes while the socket is full.
  void server_send(const std::vector<std::uint8_t>& b) {
    for (int i = 0; i < patience; ++i) {
      std::string error;
      const tls_result r = server_->write(b, error);
      if (r.status == tls_status::done) {
        ASSERT_EQ(r.bytes, b.size());
        return;
      }
      ASSERT_EQ(r.status, tls_status::want_write) << error;
      drain_client_into(client_pending_);
    }
    FAIL() << "server write never finished";
  }

  std::vector<std::uint8_t> client_receive(std::size_t n) {
    std::vector<std::uint8_t> out = std::move(client_pending_);
    client_pending_.clear();
    for (int i = 0; i < patience && out.size() < n; ++i) {
      std::uint8_t buf[4096];
      const int r = SSL_read(client_, buf, sizeof buf);
      if (r > 0) {
        out.insert(out.end(), buf, buf + r);
        continue;
      }
      const int e = SSL_get_error(client_, r);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) break;
      wait_readable(client_fd_);
    }
    return out;
  }

  /// The client's last SSL_read outcome on a closed or failed session.
  int client_read_error() {
    for (int i = 0; i < patience; ++i) {
      std::uint8_t b = 0;
      const int r = SSL_read(client_, &b, 1);
      const int e = SSL_get_error(client_, r);
      if (e != SSL_ERROR_WANT_READ) return e;
      wait_readable(client_fd_);
    }
    return SSL_ERROR_WANT_READ;
  }

  /// Sends raw bytes to the server as if from the client.
  void raw_to_server(std::span<const std::uint8_t> b) {
    ASSERT_EQ(::send(client_fd_, b.data(), b.size(), MSG_NOSIGNAL), static_cast<ssize_t>(b.size()));
  }

  /// Makes the client write its records into memory rather than the socket, so that
  /// a test can cut or alter them before they go.
  BIO* capture_client_records() {
    BIO* mem = BIO_new(BIO_s_mem());
    SSL_set0_wbio(client_, mem);
    return mem;
  }

  void close_client_socket() {
    ::close(client_fd_);
    client_fd_ = -1;
  }

  tls_channel& server() { return *server_; }
  [[nodiscard]] int server_fd() const { return server_fd_; }
  SSL* client() { return client_; }

 private:
  void drain_server_into(std::vector<std::uint8_t>& into) {
    std::vector<std::uint8_t> space(1000);
    std::string error;
    const tls_result r = server_->read(space, error);
    if (r.status == tls_status::done)
      into.insert(into.end(), space.begin(), space.begin() + static_cast<std::ptrdiff_t>(r.bytes));
    else
      wait_readable(server_fd_);
  }
  void drain_client_into(std::vector<std::uint8_t>& into) {
    std::uint8_t buf[4096];
    const int r = SSL_read(client_, buf, sizeof buf);
    if (r > 0)
      into.insert(into.end(), buf, buf + r);
    else
      wait_readable(client_fd_);
  }

  std::shared_ptr<const tls_server_context> context_;
  std::unique_ptr<tls_channel> server_;
  SSL_CTX* client_ctx_ = nullptr;
  SSL* client_ = nullptr;
  int server_fd_ = -1;
  int client_fd_ = -1;
  std::vector<std::uint8_t> pending_;
  std::vector<std::uint8_t> client_pending_;
};

std::vector<std::uint8_t> mem_bytes(BIO* mem) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(mem, &data);
  return {data, data + n};
}

// The records the client seals for `messages`, one SSL_write each, caught before
// they reach the socket.
std::vector<std::uint8_t> client_records(
    session_pair& pair, std::initializer_list<std::vector<std::uint8_t>> messages) {
  BIO* records = pair.capture_client_records();
  for (const auto& m : messages) {
    if (SSL_write(pair.client(), m.data(), static_cast<int>(m.size())) !=
        static_cast<int>(m.size()))
      throw std::runtime_error("SSL_write");
  }
  return mem_bytes(records);
}

// One server read; its bytes are appended to `got`. False on anything but bytes or
// a wait for more.
bool read_into(tls_channel& server, std::vector<std::uint8_t>& got, std::string& error) {
  std::vector<std::uint8_t> space(1000);
  const tls_result r = server.read(space, error);
  if (r.status == tls_status::done)
    got.insert(got.end(), space.begin(), space.begin() + static_cast<std::ptrdiff_t>(r.bytes));
  return r.status == tls_status::done || r.status == tls_status::want_read;
}

std::vector<std::uint8_t> joined(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

using Suite = std::tuple<int, std::string, std::string>;  // version, cipher, description

class TlsChannelSuites : public ::testing::TestWithParam<Suite> {};

TEST_P(TlsChannelSuites, SessionsCarryBytesBothWaysUnchanged) {
  const auto& [version, cipher, description] = GetParam();
  session_pair pair({version, cipher});
  ASSERT_TRUE(pair.handshake());
  EXPECT_EQ(pair.server().describe(), description);

  // Three packets in three records, read as one stream.
  const auto a = bytes_of("first packet");
  const auto b = pattern(300);
  const auto c = bytes_of("third");
  pair.client_send(a);
  pair.client_send(b);
  pair.client_send(c);
  std::vector<std::uint8_t> expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  expected.insert(expected.end(), c.begin(), c.end());
  EXPECT_EQ(pair.server_receive(expected.size()), expected);

  // ACK-sized and larger than one record (16 KiB) in each direction.
  const auto ack = std::vector<std::uint8_t>{0, 0, 0, 1};
  pair.server_send(ack);
  EXPECT_EQ(pair.client_receive(4), ack);
  const auto big = pattern(40'000);
  pair.client_send(big);
  EXPECT_EQ(pair.server_receive(big.size()), big);
  pair.server_send(big);
  EXPECT_EQ(pair.client_receive(big.size()), big);
  // And on after that, sequence numbers in step.
  pair.client_send(a);
  EXPECT_EQ(pair.server_receive(a.size()), a);
  pair.server_send(ack);
  EXPECT_EQ(pair.client_receive(4), ack);
  // Idle: OpenSSL's buffers go back.
  EXPECT_TRUE(pair.server().release_buffers());
}

INSTANTIATE_TEST_SUITE_P(VersionsAndCiphers, TlsChannelSuites,
                         ::testing::Values(Suite{TLS1_2_VERSION, "ECDHE-ECDSA-AES256-GCM-SHA384",
                                                 "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384"},
                                           Suite{TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256",
                                                 "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256"},
                                           Suite{TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305",
                                                 "TLSv1.2 ECDHE-ECDSA-CHACHA20-POLY1305"},
                                           Suite{TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA",
                                                 "TLSv1.2 ECDHE-ECDSA-AES128-SHA"},
                                           Suite{TLS1_3_VERSION, "TLS_AES_256_GCM_SHA384",
                                                 "TLSv1.3 TLS_AES_256_GCM_SHA384"},
                                           Suite{TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256",
                                                 "TLSv1.3 TLS_AES_128_GCM_SHA256"},
                                           Suite{TLS1_3_VERSION, "TLS_CHACHA20_POLY1305_SHA256",
                                                 "TLSv1.3 TLS_CHACHA20_POLY1305_SHA256"}));

TEST(TlsChannel, RecordsCutAtEveryByteArriveWhole) {
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    session_pair pair({version, ""});
    ASSERT_TRUE(pair.handshake());
    const auto a = pattern(120);
    const auto b = pattern(77);
    const auto wire = client_records(pair, {a, b});
    std::vector<std::uint8_t> got;
    std::string error;
    for (const std::uint8_t byte : wire) {
      pair.raw_to_server(std::span(&byte, 1));
      ASSERT_TRUE(read_into(pair.server(), got, error)) << error;
    }
    EXPECT_EQ(got, joined(a, b)) << version;
  }
}

TEST(TlsChannel, AnAlteredRecordEndsTheSessionWithBadRecordMac) {
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    session_pair pair({version, ""});
    ASSERT_TRUE(pair.handshake());
    BIO* records = pair.capture_client_records();
    const auto a = pattern(60);
    ASSERT_EQ(SSL_write(pair.client(), a.data(), 60), 60);
    auto wire = mem_bytes(records);
    wire[wire.size() - 20] ^= 0x01;  // inside the ciphertext
    pair.raw_to_server(wire);
    tls_status status{};
    std::string error;
    const auto got = pair.server_receive(60, &status, &error);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(status, tls_status::failed);
    EXPECT_EQ(error, "decryption failed or bad record mac");
    // OpenSSL's fatal alert is the last word: no close_notify after it.
    EXPECT_EQ(pair.server().shutdown(error).status, tls_status::closed);
    EXPECT_EQ(pair.client_read_error(), SSL_ERROR_SSL) << version;
  }
}

TEST(TlsChannel, AnOversizedRecordIsRefusedBeforeItIsRead) {
  session_pair pair({TLS1_3_VERSION, ""});
  ASSERT_TRUE(pair.handshake());
  const std::uint8_t header[] = {23, 3, 3, 0x48, 0x01};  // 18,433 bytes announced
  pair.raw_to_server(header);
  tls_status status{};
  std::string error;
  pair.server_receive(1, &status, &error);
  EXPECT_EQ(status, tls_status::failed);
  EXPECT_EQ(error, "packet length too long");
}

TEST(TlsChannel, CloseNotifyEndsTheSessionEitherWay) {
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    {
      session_pair pair({version, ""});
      ASSERT_TRUE(pair.handshake());
      const auto a = bytes_of("last words");
      pair.client_send(a);
      ASSERT_EQ(SSL_shutdown(pair.client()), 0);  // close_notify sent
      tls_status status{};
      // The bytes before the close are read first, then the close.
      EXPECT_EQ(pair.server_receive(a.size()), a);
      pair.server_receive(1, &status);
      EXPECT_EQ(status, tls_status::closed) << version;
    }
    {
      session_pair pair({version, ""});
      ASSERT_TRUE(pair.handshake());
      std::string error;
      EXPECT_EQ(pair.server().shutdown(error).status, tls_status::done) << error;
      EXPECT_EQ(pair.client_read_error(), SSL_ERROR_ZERO_RETURN) << version;
    }
  }
}

TEST(TlsChannel, APeerGoneWithoutCloseNotifyIsAClose) {
  session_pair pair({TLS1_2_VERSION, ""});
  ASSERT_TRUE(pair.handshake());
  pair.close_client_socket();
  tls_status status{};
  pair.server_receive(1, &status);
  EXPECT_EQ(status, tls_status::closed);
}

// A write the socket takes only in part: the caller repeats it with the same bytes
// until it is done, and the peer reads them exactly once, in order.
TEST(TlsChannel, AWriteTheSocketTakesInPartIsRepeatedAndArrivesOnce) {
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    session_pair pair({version, ""});
    ASSERT_TRUE(pair.handshake());
    const int small = 4096;
    ASSERT_EQ(::setsockopt(pair.server_fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    const auto big = pattern(100'000);
    std::string error;
    tls_result r = pair.server().write(big, error);
    ASSERT_EQ(r.status, tls_status::want_write) << error;
    const auto ack = std::vector<std::uint8_t>{0, 0, 0, 1};
    pair.server_send(big);  // the repeat, draining the client while it waits
    pair.server_send(ack);
    EXPECT_EQ(pair.client_receive(big.size() + ack.size()), joined(big, ack)) << version;
  }
}

// A device gone while the gateway writes: an error with its reason, not a SIGPIPE.
TEST(TlsChannel, APeerGoneMidWriteIsAFailureWithItsReason) {
  session_pair pair({TLS1_3_VERSION, ""});
  ASSERT_TRUE(pair.handshake());
  pair.close_client_socket();
  std::string error;
  const auto ack = std::vector<std::uint8_t>{0, 0, 0, 1};
  const tls_result r = pair.server().write(ack, error);
  EXPECT_EQ(r.status, tls_status::failed);
  EXPECT_EQ(error, std::strerror(EPIPE));
}

// The test device's own writes (OpenSSL's plain write()) to a gateway that refused it
// and closed first: a failed write on that connection, not a SIGPIPE that ends the
// test binary, and nothing left behind for the rest of the process.
TEST(TlsDevice, AWriteToAPeerThatClosedFailsWithoutEndingTheProcess) {
  std::array<int, 2> fds{};
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds.data()), 0);
  ::close(fds[1]);
  {
    const tgw::test::detail::sigpipe_held held;
    errno = 0;
    EXPECT_EQ(::write(fds[0], "x", 1), -1);
    EXPECT_EQ(errno, EPIPE);
  }
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  EXPECT_EQ(sigismember(&mask, SIGPIPE), 0);
  ::close(fds[0]);
}

TEST(TlsChannel, AKeyUpdateTheDeviceRequestsMovesBothDirectionsOn) {
  session_pair pair({TLS1_3_VERSION, ""});
  ASSERT_TRUE(pair.handshake());
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(SSL_key_update(pair.client(), SSL_KEY_UPDATE_REQUESTED), 1);
    const auto a = pattern(50 + static_cast<std::size_t>(round));
    pair.client_send(a);
    EXPECT_EQ(pair.server_receive(a.size()), a) << round;
    // Our answer went first, under the old keys; this comes under the new ones.
    const auto ack = std::vector<std::uint8_t>{0, 0, 0, static_cast<std::uint8_t>(round)};
    pair.server_send(ack);
    EXPECT_EQ(pair.client_receive(4), ack) << round;
  }
  ASSERT_EQ(SSL_key_update(pair.client(), SSL_KEY_UPDATE_NOT_REQUESTED), 1);
  const auto b = bytes_of("after an unrequested update");
  pair.client_send(b);
  EXPECT_EQ(pair.server_receive(b.size()), b);
  pair.server_send(b);
  EXPECT_EQ(pair.client_receive(b.size()), b);
}

// OpenSSL answers a TLS 1.2 renegotiation with a no_renegotiation alert, and the
// session goes on without it.
TEST(TlsChannel, ATls12RenegotiationIsRefused) {
  session_pair pair({TLS1_2_VERSION, ""});
  ASSERT_TRUE(pair.handshake());
  ASSERT_EQ(SSL_renegotiate(pair.client()), 1);
  ASSERT_EQ(SSL_do_handshake(pair.client()), -1);  // sends its ClientHello, encrypted
  tls_status status{};
  pair.server_receive(1, &status);
  EXPECT_EQ(status, tls_status::want_read);
  ERR_clear_error();
  int r = 0;
  for (int i = 0; i < patience && (r = SSL_do_handshake(pair.client())) == -1 &&
                  SSL_get_error(pair.client(), r) == SSL_ERROR_WANT_READ;
       ++i)
    wait_readable(pair.client() != nullptr ? SSL_get_fd(pair.client()) : -1);
  EXPECT_NE(r, 1);
  EXPECT_EQ(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_NO_RENEGOTIATION);
  ERR_clear_error();
}

// A TLS 1.3 peer may update its keys; OpenSSL counts none. The channel ends a session
// after max_key_updates_in_a_row without application data between them, and a read
// handles at most what one receive brings, however many the socket holds.
TEST(TlsChannel, KeyUpdatesInARowEndTheSessionAndOneReadHandlesOneReceive) {
  {
    // Up to the bound, each followed by a packet: the session goes on.
    session_pair pair({TLS1_3_VERSION, ""});
    ASSERT_TRUE(pair.handshake());
    for (int round = 0; round < 3; ++round) {
      for (std::uint32_t i = 0; i < tls_channel::max_key_updates_in_a_row; ++i) {
        ASSERT_EQ(SSL_key_update(pair.client(), SSL_KEY_UPDATE_NOT_REQUESTED), 1);
        ASSERT_EQ(SSL_write(pair.client(), "", 0), 0);  // sends the update, no data
      }
      const auto a = pattern(40);
      pair.client_send(a);
      EXPECT_EQ(pair.server_receive(a.size()), a) << round;
    }
  }
  session_pair pair({TLS1_3_VERSION, ""});
  ASSERT_TRUE(pair.handshake());
  BIO* records = pair.capture_client_records();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(SSL_key_update(pair.client(), SSL_KEY_UPDATE_NOT_REQUESTED), 1);
    ASSERT_EQ(SSL_write(pair.client(), "", 0), 0);  // sends the update, no data
  }
  const auto wire = mem_bytes(records);
  ASSERT_GT(wire.size(), 20'000U);  // more than one receive of OpenSSL's takes
  pair.raw_to_server(wire);
  std::vector<std::uint8_t> space(1000);
  std::string error;
  EXPECT_EQ(pair.server().read(space, error).status, tls_status::failed);
  const std::size_t counted = std::stoul(error);
  EXPECT_GT(counted, tls_channel::max_key_updates_in_a_row) << error;
  EXPECT_LT(counted, 1000U) << error;
  EXPECT_NE(error.find("TLS KeyUpdates without application data"), std::string::npos) << error;
  EXPECT_EQ(pair.server().shutdown(error).status, tls_status::closed);
}

// The simulator's side: a client tls_channel against an OpenSSL server that sends
// two TLS 1.3 session tickets after the handshake.
TEST(TlsChannel, AClientSessionSkipsTheServersTicketsAndCarriesBytes) {
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
    SSL_CTX* server_ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate_file(server_ctx, server_certificate().cert.c_str(), SSL_FILETYPE_PEM);
    SSL_CTX_use_PrivateKey_file(server_ctx, server_certificate().key.c_str(), SSL_FILETYPE_PEM);
    SSL_CTX_set_num_tickets(server_ctx, 2);
    SSL_CTX_set_max_proto_version(server_ctx, version);
    SSL* server = SSL_new(server_ctx);
    SSL_set_fd(server, fds[0]);
    SSL_set_accept_state(server);
    SSL_CTX* client_ctx = SSL_CTX_new(TLS_client_method());
    {
      tls_channel client(client_ctx, fds[1], tls_channel::role::client);
      bool client_done = false;
      bool server_done = false;
      for (int i = 0; i < patience && !(client_done && server_done); ++i) {
        std::string error;
        if (!client_done) client_done = client.handshake(error).status == tls_status::done;
        if (!server_done) server_done = SSL_do_handshake(server) == 1;
        wait_readable(i % 2 == 0 ? fds[0] : fds[1]);
      }
      ASSERT_TRUE(client_done && server_done) << version;
      const auto packet = pattern(90);
      std::string error;
      ASSERT_EQ(client.write(packet, error).status, tls_status::done) << error;
      std::vector<std::uint8_t> got(90);
      std::size_t n = 0;
      for (int i = 0; i < patience && n < 90; ++i) {
        const int r = SSL_read(server, got.data() + n, static_cast<int>(90 - n));
        if (r > 0)
          n += static_cast<std::size_t>(r);
        else
          wait_readable(fds[0]);
      }
      EXPECT_EQ(got, packet) << version;
      const std::uint8_t ack[] = {0, 0, 0, 1};
      ASSERT_EQ(SSL_write(server, ack, 4), 4);
      std::vector<std::uint8_t> space(100);
      tls_result r{};
      for (int i = 0; i < patience; ++i) {
        r = client.read(space, error);
        if (r.status != tls_status::want_read) break;
        wait_readable(fds[1]);
      }
      ASSERT_EQ(r.status, tls_status::done) << error;
      EXPECT_EQ(std::vector<std::uint8_t>(space.begin(), space.begin() + 4),
                std::vector<std::uint8_t>(ack, ack + 4))
          << version;
    }
    SSL_free(server);
    SSL_CTX_free(server_ctx);
    SSL_CTX_free(client_ctx);
    ::close(fds[0]);
    ::close(fds[1]);
  }
}

}  // namespace
}  // namespace tgw::infra::net
