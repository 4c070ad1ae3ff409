// tls_channel in the client role, as the simulator uses it, against an OpenSSL server
// (tls_session_pair.hpp for the certificate).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/infra/net/tls_session_pair.hpp"

namespace tgw::infra::net::tls_test {
namespace {

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
}  // namespace tgw::infra::net::tls_test
