#include "infra/text/human_time.hpp"

#include <gtest/gtest.h>

namespace tgw::infra {
namespace {

constexpr std::int64_t t0 = 1700000000000;  // 2023-11-14T22:13:20Z

TEST(HumanTime, UtcTimeToTheSecond) {
  EXPECT_EQ(utc_time(t0), "2023-11-14T22:13:20Z");
  EXPECT_EQ(utc_time(t0 + 999), "2023-11-14T22:13:20Z");
  EXPECT_EQ(utc_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_time(-1), "1969-12-31T23:59:59Z");
}

TEST(HumanTime, AgeInAtMostTwoUnitsRoundedDown) {
  EXPECT_EQ(time_ago(t0, t0), "just now");
  EXPECT_EQ(time_ago(t0, t0 + 999), "just now");
  EXPECT_EQ(time_ago(t0, t0 + 12'000), "12 s ago");
  EXPECT_EQ(time_ago(t0, t0 + 250'000), "4 min 10 s ago");
  EXPECT_EQ(time_ago(t0, t0 + 240'000), "4 min ago");
  EXPECT_EQ(time_ago(t0, t0 + (3 * 3600 + 12 * 60 + 5) * 1000LL), "3 h 12 min ago");
  EXPECT_EQ(time_ago(t0, t0 + (3 * 3600 + 5) * 1000LL), "3 h ago");
  EXPECT_EQ(time_ago(t0, t0 + (2 * 86400 + 5 * 3600 + 59) * 1000LL), "2 d 5 h ago");
  EXPECT_EQ(time_ago(t0 + 3000, t0), "in 3 s");
}

TEST(HumanTime, ParsesTheTimesItWrites) {
  EXPECT_EQ(parse_utc_time("2023-11-14T22:13:20Z"), t0);
  EXPECT_EQ(parse_utc_time(utc_time(t0)), t0);
  EXPECT_EQ(parse_utc_time("2023-11-14"), 1699920000000);
  for (const char* bad :
       {"", "2023-11-14T22:13:20", "2023-13-01", "2023-02-30", "2023-11-14 22:13:20Z",
        "2023-11-14T24:00:00Z", "yesterday", "1700000000000"})
    EXPECT_FALSE(parse_utc_time(bad)) << bad;
}

TEST(HumanTime, TimeAndAge) {
  EXPECT_EQ(time_and_age(t0, t0 + 12'000), "2023-11-14T22:13:20Z (12 s ago)");
}

}  // namespace
}  // namespace tgw::infra
