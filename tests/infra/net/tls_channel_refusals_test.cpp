// What tls_channel refuses from its peer (tls_session_pair.hpp): an altered or
// oversized record, a TLS 1.2 renegotiation, and TLS 1.3 key updates without end.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/infra/net/tls_session_pair.hpp"

namespace tgw::infra::net::tls_test {
namespace {

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

}  // namespace
}  // namespace tgw::infra::net::tls_test
