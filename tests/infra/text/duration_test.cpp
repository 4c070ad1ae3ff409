#include "infra/text/duration.hpp"

#include <gtest/gtest.h>

namespace tgw::infra {
namespace {

using namespace std::chrono_literals;

TEST(Duration, ParsesUnitsAndPlainSeconds) {
  EXPECT_EQ(parse_duration("30s"), 30s);
  EXPECT_EQ(parse_duration("500ms"), 500ms);
  EXPECT_EQ(parse_duration("2m"), 2min);
  EXPECT_EQ(parse_duration("1h"), 1h);
  EXPECT_EQ(parse_duration("45"), 45s);
  EXPECT_EQ(parse_duration("0"), 0ms);
}

TEST(Duration, RejectsAnythingElse) {
  for (const char* bad : {"", "s", "-1s", "1.5s", "3x", "10 s", "ms", "99999999999999999999"})
    EXPECT_FALSE(parse_duration(bad)) << bad;
}

TEST(Duration, FormatsTheShortestExactForm) {
  EXPECT_EQ(format_duration(30s), "30s");
  EXPECT_EQ(format_duration(120s), "2m");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(0ms), "0s");
}

}  // namespace
}  // namespace tgw::infra
