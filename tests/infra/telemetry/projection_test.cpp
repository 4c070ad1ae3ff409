#include "infra/telemetry/projection.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::telemetry {
namespace {

field_list identified(const std::string& at, const std::string& instance) {
  return {{"type", "identified"}, {"at_ms", at}, {"instance", instance}, {"peer", "10.0.0.1:5"}};
}

field_list accepted(const std::string& at, const std::string& fp, const std::string& records,
                    const std::string& pos_ts) {
  return {{"type", "records_accepted"},
          {"at_ms", at},
          {"instance", "gw-b"},
          {"fingerprint", fp},
          {"records", records},
          {"first_ts", "1"},
          {"last_ts", "2"},
          {"pos_ts", pos_ts},
          {"lon", "25.2616688"},
          {"lat", "54.6992512"},
          {"speed", "41"},
          {"satellites", "9"}};
}

TEST(Projection, AnEmptyJournalFoldsToNoFields) {
  EXPECT_TRUE(render(device_projection{}).empty());
}

TEST(Projection, IdentifiedAndDisconnectedSetOnlineInstanceAndLastSeen) {
  device_projection p;
  telemetry::apply(p, identified("100", "gw-a"));
  EXPECT_EQ(render(p), (field_list{{"online", "1"},
                                   {"last_seen_ms", "100"},
                                   {"instance", "gw-a"},
                                   {"connected_ms", "100"},
                                   {"records_at_connect", "0"}}));
  telemetry::apply(
      p, {{"type", "disconnected"}, {"at_ms", "200"}, {"instance", "gw-a"}, {"reason", "x"}});
  EXPECT_EQ(render(p), (field_list{{"online", "0"},
                                   {"last_seen_ms", "200"},
                                   {"instance", "gw-a"},
                                   {"connected_ms", "100"},
                                   {"records_at_connect", "0"}}));
}

TEST(Projection, AConnectionRemembersWhenItBeganAndTheRecordsSentBefore) {
  device_projection p;
  telemetry::apply(p, identified("100", "gw-a"));
  telemetry::apply(p, accepted("150", "aa", "2", "1700000001000"));
  telemetry::apply(
      p, {{"type", "disconnected"}, {"at_ms", "200"}, {"instance", "gw-b"}, {"reason", "x"}});
  telemetry::apply(p, identified("300", "gw-c"));
  telemetry::apply(p, accepted("350", "bb", "3", "1700000002000"));
  EXPECT_EQ(p.connected_ms, "300");
  EXPECT_EQ(p.records_at_connect, 2);
  EXPECT_EQ(p.records_total, 5);
}

TEST(Projection, RecordsAcceptedSetsThePositionAndSumsRecords) {
  device_projection p;
  telemetry::apply(p, identified("100", "gw-a"));
  telemetry::apply(p, accepted("150", "aa", "2", "1700000001000"));
  telemetry::apply(p, accepted("160", "bb", "3", "1700000002000"));
  EXPECT_EQ(render(p), (field_list{{"online", "1"},
                                   {"last_seen_ms", "160"},
                                   {"instance", "gw-b"},
                                   {"connected_ms", "100"},
                                   {"records_at_connect", "0"},
                                   {"last_fingerprint", "bb"},
                                   {"earlier_fingerprints", "aa"},
                                   {"last_ts", "1700000002000"},
                                   {"lon", "25.2616688"},
                                   {"lat", "54.6992512"},
                                   {"speed", "41"},
                                   {"satellites", "9"},
                                   {"records_total", "5"}}));
}

// The resend window: the latest accepted packet and the three before it, as the
// Lua's remember() keeps them; an older one is no longer recognised.
TEST(Projection, TheLastFourAcceptedPacketsAreRecognisedAsResends) {
  device_projection p;
  EXPECT_FALSE(recently_accepted(p, "f1"));
  for (int i = 1; i <= 9; ++i)
    telemetry::apply(p, accepted(std::to_string(100 + i), "f" + std::to_string(i), "1", "7"));
  EXPECT_EQ(p.last_fingerprint, "f9");
  EXPECT_EQ(p.earlier_fingerprints, "f8 f7 f6");
  EXPECT_TRUE(recently_accepted(p, "f9"));
  EXPECT_TRUE(recently_accepted(p, "f6"));
  EXPECT_FALSE(recently_accepted(p, "f5"));
  EXPECT_FALSE(recently_accepted(p, "f")) << "a whole fingerprint, not a part of one";
}

TEST(Projection, AResendTouchesOnlyLastSeen) {
  device_projection p;
  telemetry::apply(p, accepted("150", "aa", "2", "7"));
  device_projection expected = p;
  expected.last_seen_ms = "170";
  telemetry::apply(p, {{"type", "packet_resent"},
                       {"at_ms", "170"},
                       {"instance", "gw-c"},
                       {"fingerprint", "aa"},
                       {"records", "2"}});
  EXPECT_EQ(p, expected);
}

TEST(Projection, RejectedFramesAndUnknownEventsChangeNothing) {
  device_projection p;
  telemetry::apply(p, identified("100", "gw-a"));
  const device_projection before = p;
  telemetry::apply(p, {{"type", "frame_rejected"}, {"at_ms", "300"}, {"instance", "gw-a"}});
  telemetry::apply(p, {{"type", "command_dispatched"}, {"at_ms", "400"}, {"instance", "gw-z"}});
  telemetry::apply(p, {{"at_ms", "500"}});  // no type at all
  EXPECT_EQ(p, before);
}

TEST(Projection, ParseReadsBackWhatRenderWrote) {
  device_projection p;
  telemetry::apply(p, identified("100", "gw-a"));
  telemetry::apply(p, accepted("150", "aa", "2", "1700000001000"));
  EXPECT_EQ(parse(render(p)), p);
  // Unknown fields are left out; a count that is no number is absent.
  const device_projection odd =
      parse({{"online", "1"}, {"junk", "x"}, {"records_total", "12x"}, {"satellites", "7"}});
  EXPECT_EQ(odd.online, "1");
  EXPECT_EQ(odd.satellites, "7");
  EXPECT_FALSE(odd.records_total);
}

TEST(Projection, CompareListsChangedMissingAndExtraFields) {
  const field_list current = {{"online", "1"}, {"instance", "a"}, {"junk", "x"}};
  const field_list rebuilt = {{"online", "1"}, {"instance", "b"}, {"records_total", "3"}};
  EXPECT_EQ(compare(current, rebuilt),
            (std::vector<field_difference>{{"instance", "a", "b"},
                                           {"junk", "x", std::nullopt},
                                           {"records_total", std::nullopt, "3"}}));
  EXPECT_TRUE(compare(rebuilt, rebuilt).empty());
}

}  // namespace
}  // namespace tgw::infra::telemetry
