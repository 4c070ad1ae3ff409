// The floor of a telemetry stream no consumer group reads, the domain rule the
// retention actor applies to what its store reports.
#include "actors/domain/retention_rules.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace tgw::domain {
namespace {

using ports::memory_use;
using ports::retention_view;

// A stream with no group: its floor is --telemetry-ungrouped-maxlen entries, and fewer
// while the store is nearly full (down to what leaves it at 80 % of its memory limit).
TEST(UngroupedFloor, KeepsTheBoundAndLessUnderMemoryPressure) {
  retention_view view;
  view.length = 1000;
  view.bytes = 100'000;  // 100 bytes an entry
  ungrouped_floor floor;
  floor.maxlen = 600;
  EXPECT_EQ(ungrouped_keep(view, floor, std::nullopt), 600);
  floor.maxlen = 0;  // no bound
  EXPECT_EQ(ungrouped_keep(view, floor, std::nullopt), 1000);
  EXPECT_EQ(ungrouped_keep(view, floor, memory_use{890'000, 1'000'000}), 1000);  // under 90 %
  EXPECT_EQ(ungrouped_keep(view, floor, memory_use{900'000, 0}), 1000);          // no maxmemory
  // 95 % used: 150,000 bytes over 80 %, 1,500 entries' worth: everything goes.
  EXPECT_EQ(ungrouped_keep(view, floor, memory_use{950'000, 1'000'000}), 0);
  // 90 % used: 10,000 bytes over 80 % of 100,000... as entries of 100 bytes: 100 go.
  EXPECT_EQ(ungrouped_keep(view, floor, memory_use{90'000, 100'000}), 900);
  floor.maxlen = 500;
  EXPECT_EQ(ungrouped_keep(view, floor, memory_use{90'000, 100'000}), 500);
}

TEST(UngroupedFloor, NearingItIsHalfTheBoundOrFourFifthsOfMaxmemory) {
  retention_view view;
  view.length = 400;
  view.bytes = 40'000;
  ungrouped_floor floor;
  floor.maxlen = 1000;
  EXPECT_FALSE(ungrouped_nearing_floor(view, floor, std::nullopt));
  view.length = 500;
  EXPECT_TRUE(ungrouped_nearing_floor(view, floor, std::nullopt));
  view.length = 10;
  EXPECT_FALSE(ungrouped_nearing_floor(view, floor, memory_use{79, 100}));
  EXPECT_TRUE(ungrouped_nearing_floor(view, floor, memory_use{80, 100}));
  floor.maxlen = 0;
  EXPECT_FALSE(ungrouped_nearing_floor(view, floor, memory_use{80, 0}));
}

}  // namespace
}  // namespace tgw::domain
