#include "codecs/device_conversation.hpp"

#include <gtest/gtest.h>

namespace tgw::codecs {
namespace {

TEST(InboundGuard, OnlyTheImeiMayComeFirst) {
  inbound_guard guard;
  EXPECT_EQ(guard.on_frame(frame_kind::keepalive), frame_verdict::before_imei);
  EXPECT_FALSE(guard.identified());
  EXPECT_EQ(guard.in_flight(), 0U);
}

TEST(InboundGuard, KeepalivesAfterTheImeiAreCountedNotDelivered) {
  inbound_guard guard;
  EXPECT_EQ(guard.on_frame(frame_kind::imei), frame_verdict::deliver);
  EXPECT_TRUE(guard.identified());
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(guard.on_frame(frame_kind::keepalive), frame_verdict::keepalive);
  EXPECT_EQ(guard.in_flight(), 1U);  // the IMEI alone
}

TEST(InboundGuard, ReadingStopsWhileTheSessionHoldsItsBound) {
  inbound_guard guard;
  ASSERT_EQ(guard.on_frame(frame_kind::imei), frame_verdict::deliver);
  EXPECT_TRUE(guard.may_read(2));
  ASSERT_EQ(guard.on_frame(frame_kind::avl), frame_verdict::deliver);
  EXPECT_FALSE(guard.may_read(2));
  ASSERT_EQ(guard.on_frame(frame_kind::command), frame_verdict::deliver);  // same read
  EXPECT_EQ(guard.in_flight(), 3U);
  guard.frame_done();
  guard.frame_done();
  EXPECT_TRUE(guard.may_read(2));
  guard.frame_done();
  guard.frame_done();  // more than delivered: stays at 0
  EXPECT_EQ(guard.in_flight(), 0U);
}

TEST(BadFrameBudget, TheConnectionEndsAtTheLastBadFrameAllowed) {
  bad_frame_budget budget(3);
  EXPECT_FALSE(budget.rejected({errc::bad_crc, 62}, 66));
  EXPECT_FALSE(budget.rejected({errc::bad_crc, 62}, 66));
  EXPECT_TRUE(budget.rejected({errc::truncated, 30}, 40));
  EXPECT_EQ(budget.bad(), 3U);
}

TEST(BadFrameBudget, ZeroAllowsAnyNumber) {
  bad_frame_budget budget(0);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(budget.rejected({errc::bad_crc, 1}, 2));
}

TEST(BadFrameBudget, ASpellIsTheRunOfConsecutiveBadFramesToldOnce) {
  bad_frame_budget budget(10);
  EXPECT_FALSE(budget.end_spell().has_value());
  (void)budget.rejected({errc::bad_crc, 62}, 66);
  (void)budget.rejected({errc::zero_records, 9}, 20);
  const auto spell = budget.end_spell();
  ASSERT_TRUE(spell.has_value());
  EXPECT_EQ(spell->first_error, errc::bad_crc);
  EXPECT_EQ(spell->first_offset, 62U);
  EXPECT_EQ(spell->first_size, 66U);
  EXPECT_EQ(spell->frames, 2U);
  EXPECT_FALSE(budget.end_spell().has_value());  // told once
  (void)budget.rejected({errc::truncated, 5}, 7);
  EXPECT_EQ(budget.end_spell()->frames, 1U);
  EXPECT_EQ(budget.bad(), 3U);  // the budget counts every one, spells or not
}

}  // namespace
}  // namespace tgw::codecs
