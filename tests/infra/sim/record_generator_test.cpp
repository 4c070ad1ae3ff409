#include "infra/sim/record_generator.hpp"

#include <cmath>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"

namespace tgw::infra::sim {
namespace {

constexpr std::uint64_t now_ms = 1'700'000'000'000;

class SimRecordGenerator : public ::testing::TestWithParam<codecs::codec_id> {};

TEST_P(SimRecordGenerator, PacketsEncodeAndDecodeWithIncreasingTimestamps) {
  const record_generator gen(GetParam(), 5, 12);
  motion_state state = gen.start(7, 1, now_ms);
  std::vector<std::uint8_t> frame;
  codecs::avl_packet packet;
  std::uint64_t last = 0;
  for (int p = 0; p < 50; ++p) {
    // Packets faster than the clock: timestamps must still increase.
    const auto records = gen.next(state, now_ms + static_cast<std::uint64_t>(p / 10));
    ASSERT_EQ(records.size(), 5u);
    frame.clear();
    ASSERT_EQ(codecs::encode_avl_frame(GetParam(), records, frame), codecs::errc::ok);
    ASSERT_TRUE(codecs::decode_avl_frame(frame, packet).ok());
    ASSERT_EQ(packet.records.size(), 5u);
    for (const codecs::avl_record& r : packet.records) {
      EXPECT_GT(r.timestamp_ms, last);
      last = r.timestamp_ms;
      EXPECT_EQ(packet.io_of(r).size(), 12u);
      EXPECT_LE(r.speed, 110);
      EXPECT_LT(r.angle, 360);
      EXPECT_NEAR(static_cast<double>(r.latitude) / 1e7, 54.69, 1.0);
      EXPECT_NEAR(static_cast<double>(r.longitude) / 1e7, 25.28, 1.5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAvlCodecs, SimRecordGenerator,
                         ::testing::Values(codecs::codec_id::codec8, codecs::codec_id::codec8e,
                                           codecs::codec_id::codec16));

TEST(SimRecordGeneratorMotion, VehiclesMoveAndOdometerGrows) {
  const record_generator gen(codecs::codec_id::codec8e, 1, 5);
  motion_state state = gen.start(0, 42, now_ms);
  const auto first = gen.next(state, now_ms + 1000);
  const std::int32_t lat0 = first[0].latitude;
  const std::int32_t lon0 = first[0].longitude;
  std::uint64_t odometer0 = 0;
  for (const codecs::io_value& io : first[0].io)
    if (io.id == 16) odometer0 = io.value;
  std::uint64_t t = now_ms + 1000;
  codecs::avl_record_data last;
  for (int i = 0; i < 300; ++i) last = gen.next(state, t += 10'000)[0];
  EXPECT_TRUE(last.latitude != lat0 || last.longitude != lon0);
  std::uint64_t odometer = 0;
  for (const codecs::io_value& io : last.io)
    if (io.id == 16) odometer = io.value;
  EXPECT_GT(odometer, odometer0);
}

TEST(SimRecordGeneratorMotion, UsesFmbIoIdsInOrderAndEveryWidth) {
  const record_generator gen(codecs::codec_id::codec8, 1, 32);
  motion_state state = gen.start(0, 1, now_ms);
  const auto records = gen.next(state, now_ms);
  ASSERT_EQ(records[0].io.size(), 32u);
  EXPECT_EQ(records[0].io[0].id, 239);  // Ignition
  EXPECT_EQ(records[0].io[1].id, 240);  // Movement
  std::set<std::uint16_t> ids;
  std::set<std::uint8_t> widths;
  for (const codecs::io_value& io : records[0].io) {
    ids.insert(io.id);
    widths.insert(io.width);
    EXPECT_LE(io.id, 255);  // Codec 8 carries one-byte ids.
  }
  EXPECT_EQ(ids.size(), 32u);
  EXPECT_EQ(widths, (std::set<std::uint8_t>{1, 2, 4, 8}));
}

TEST(SimRecordGeneratorMotion, DevicesStartInDifferentPlaces) {
  const record_generator gen(codecs::codec_id::codec8e, 1, 0);
  const motion_state a = gen.start(0, 1, now_ms);
  const motion_state b = gen.start(1, 1, now_ms);
  EXPECT_TRUE(a.latitude != b.latitude || a.longitude != b.longitude);
  EXPECT_LT(a.last_timestamp_ms, now_ms);
}

}  // namespace
}  // namespace tgw::infra::sim
