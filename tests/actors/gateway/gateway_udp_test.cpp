// UDP devices of a real `tgw serve` (gateway_fixture.hpp): the reply after persisting,
// a resend stored once, and the journal of a device that goes quiet.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/actors/gateway/gateway_fixture.hpp"

namespace tgw::test::gateway_suite {
namespace {

/// Sends one datagram to the gateway's UDP port and waits for a reply.
std::optional<bytes> udp_exchange(std::uint16_t port, const bytes& datagram) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&addr),
                 sizeof addr);
  bytes reply(64);
  const ssize_t n = ::recv(fd, reply.data(), reply.size(), 0);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  reply.resize(static_cast<std::size_t>(n));
  return reply;
}

TEST_F(Gateway, AnswersUdpAfterPersistingAndStoresAResendOnce) {
  start();
  bytes datagram;
  const auto records = sample_records(2, 1'700'000'000'000);
  ASSERT_EQ(codecs::encode_udp_datagram(0xCAFE, 0x07, make_imei(imei_a), codecs::codec_id::codec8e,
                                        records, datagram),
            codecs::errc::ok);
  const bytes expected{0x00, 0x05, 0xCA, 0xFE, 0x01, 0x07, 0x02};
  EXPECT_EQ(udp_exchange(port, datagram), expected);
  EXPECT_EQ(stream_length(), 2);
  EXPECT_EQ(udp_exchange(port, datagram), expected);  // the device did not get the reply
  EXPECT_EQ(stream_length(), 2);
  bytes malformed = datagram;
  malformed[1] ^= 0x01;  // length field no longer matches
  EXPECT_FALSE(udp_exchange(port, malformed).has_value());
  // UDP has no handshake: the first datagram introduces the device in the journal.
  EXPECT_EQ(journal_types(imei_a),
            (std::vector<std::string>{"identified", "records_accepted", "packet_resent"}));
  const auto first = redis.command({"XRANGE", journal(imei_a), "-", "+"});
  const auto& fields = first.elements.at(0).elements.at(1).elements;
  ASSERT_EQ(fields.size(), 10U);
  EXPECT_EQ(fields[6].text, "peer");
  EXPECT_TRUE(fields[7].text.starts_with("127.0.0.1:")) << fields[7].text;
  EXPECT_EQ(fields[8].text, "transport");
  EXPECT_EQ(fields[9].text, "udp");
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "1");
}

TEST_F(Gateway, AQuietUdpDeviceIsJournaledDisconnectedAndBackAgain) {
  start({"--udp-idle-timeout-s", "1"});
  bytes datagram;
  ASSERT_EQ(codecs::encode_udp_datagram(0x0001, 0x01, make_imei(imei_a), codecs::codec_id::codec8e,
                                        sample_records(1, 1'700'000'000'000), datagram),
            codecs::errc::ok);
  ASSERT_TRUE(udp_exchange(port, datagram).has_value());
  EXPECT_TRUE(eventually([&] {
    const auto t = journal_types(imei_a);
    return !t.empty() && t.back() == "disconnected";
  }));
  const auto last = redis.command({"XREVRANGE", journal(imei_a), "+", "-", "COUNT", "1"});
  EXPECT_EQ(last.elements.at(0).elements.at(1).elements.back().text, "udp idle");
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "0");

  datagram.clear();  // the encoder appends
  ASSERT_EQ(codecs::encode_udp_datagram(0x0002, 0x02, make_imei(imei_a), codecs::codec_id::codec8e,
                                        sample_records(1, 1'700'000'100'000), datagram),
            codecs::errc::ok);
  ASSERT_TRUE(udp_exchange(port, datagram).has_value());
  EXPECT_EQ(journal_types(imei_a),
            (std::vector<std::string>{"identified", "records_accepted", "disconnected",
                                      "identified", "records_accepted"}));
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
  EXPECT_EQ(journal_types(imei_a).back(), "disconnected");
  const auto gone = redis.command({"XREVRANGE", journal(imei_a), "+", "-", "COUNT", "1"});
  EXPECT_EQ(gone.elements.at(0).elements.at(1).elements.back().text, "shutdown");
}

}  // namespace
}  // namespace tgw::test::gateway_suite
