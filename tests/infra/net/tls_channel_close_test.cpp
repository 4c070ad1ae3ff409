// How a tls_channel session ends (tls_session_pair.hpp): close_notify either way, a
// peer gone without one or in the middle of a write; and the test device's own write
// to a peer that closed first.
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/infra/net/tls_session_pair.hpp"

namespace tgw::infra::net::tls_test {
namespace {

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

}  // namespace
}  // namespace tgw::infra::net::tls_test
