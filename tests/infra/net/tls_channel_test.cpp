// tls_channel against OpenSSL itself as the peer, over a socket pair (tls_session_pair.hpp):
// OpenSSL carries every record, driven on a non-blocking socket through the channel's own
// BIO, one receive from the socket a call. Here: bytes carried both ways unchanged,
// whatever the version, cipher, record cuts, partial writes or key updates.

#include "infra/net/tls_channel.hpp"

#include <sys/socket.h>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "tests/infra/net/tls_session_pair.hpp"

namespace tgw::infra::net::tls_test {
namespace {

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

}  // namespace
}  // namespace tgw::infra::net::tls_test
