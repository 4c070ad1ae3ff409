#include "infra/sim/fleet_options.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::sim {
namespace {

using std::chrono::milliseconds;

TEST(SimFleetOptions, ParsesDurations) {
  EXPECT_EQ(parse_duration("250ms"), milliseconds{250});
  EXPECT_EQ(parse_duration("5s"), milliseconds{5000});
  EXPECT_EQ(parse_duration("5"), milliseconds{5000});
  EXPECT_EQ(parse_duration("1.5s"), milliseconds{1500});
  EXPECT_EQ(parse_duration("2m"), milliseconds{120'000});
  EXPECT_EQ(parse_duration("1h"), milliseconds{3'600'000});
  EXPECT_EQ(parse_duration("0"), milliseconds{0});
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("s"));
  EXPECT_FALSE(parse_duration("5 s"));
  EXPECT_FALSE(parse_duration("5d"));
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("1e30s"));
}

TEST(SimFleetOptions, ParsesTargets) {
  std::string host;
  std::uint16_t port = 0;
  ASSERT_TRUE(parse_target("127.0.0.1:5027", host, port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 5027);
  ASSERT_TRUE(parse_target("gateway.local:1", host, port));
  EXPECT_EQ(host, "gateway.local");
  ASSERT_TRUE(parse_target("[::1]:5027", host, port));
  EXPECT_EQ(host, "::1");
  EXPECT_FALSE(parse_target("127.0.0.1", host, port));
  EXPECT_FALSE(parse_target("127.0.0.1:0", host, port));
  EXPECT_FALSE(parse_target("127.0.0.1:70000", host, port));
  EXPECT_FALSE(parse_target(":5027", host, port));
  EXPECT_FALSE(parse_target("::1:5027", host, port));
  EXPECT_FALSE(parse_target("[::1]5027", host, port));
  EXPECT_FALSE(parse_target("host:50x", host, port));
}

TEST(SimFleetOptions, ParsesCodecs) {
  EXPECT_EQ(parse_avl_codec("8"), codecs::codec_id::codec8);
  EXPECT_EQ(parse_avl_codec("8E"), codecs::codec_id::codec8e);
  EXPECT_EQ(parse_avl_codec("8e"), codecs::codec_id::codec8e);
  EXPECT_EQ(parse_avl_codec("16"), codecs::codec_id::codec16);
  EXPECT_FALSE(parse_avl_codec("12"));
}

TEST(SimFleetOptions, ValidatesCombinations) {
  fleet_options o;
  EXPECT_EQ(validate(o), "");
  o.imei_base = 999'999'999'999'999;
  o.count = 2;
  EXPECT_NE(validate(o), "");  // The second IMEI would need 16 digits.
  o = {};
  o.records_per_packet = 256;
  EXPECT_NE(validate(o), "");
  o = {};
  o.reconnect_max_delay = milliseconds{10};
  EXPECT_NE(validate(o), "");
  o = {};
  o.bad_crc_share = 1.5;
  EXPECT_NE(validate(o), "");
  o = {};
  o.io_per_record = max_io_per_record + 1;
  EXPECT_NE(validate(o), "");
}

// A send interval counts from the ACK; a send period from when the acknowledged packet
// first went out, so a late ACK shortens the wait and a very late one makes it zero.
TEST(SimFleetOptions, TheNextPacketWaitsTheIntervalOrTheRestOfThePeriod) {
  using std::chrono::milliseconds;
  const std::chrono::steady_clock::time_point sent{std::chrono::seconds{100}};
  fleet_options o;
  o.send_interval = milliseconds{400};
  EXPECT_EQ(next_packet_delay(o, sent, sent + milliseconds{30}), milliseconds{400});
  o.send_period = milliseconds{400};
  EXPECT_EQ(next_packet_delay(o, sent, sent + milliseconds{30}), milliseconds{370});
  EXPECT_EQ(next_packet_delay(o, sent, sent + std::chrono::microseconds{30'500}),
            milliseconds{370});  // rounded up: never early
  EXPECT_EQ(next_packet_delay(o, sent, sent + milliseconds{400}), milliseconds{0});
  EXPECT_EQ(next_packet_delay(o, sent, sent + milliseconds{900}), milliseconds{0});
}

TEST(SimFleetOptions, SpreadsSourceAddressesOverLoopback) {
  EXPECT_EQ(spread_source_address(0, 4), 0x7F000001U);
  EXPECT_EQ(spread_source_address(5, 4), 0x7F000002U);
  EXPECT_EQ(spread_source_address(300, 1000), 0x7F00012DU);  // 127.0.1.45
}

}  // namespace
}  // namespace tgw::infra::sim
