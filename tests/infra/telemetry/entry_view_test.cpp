#include "infra/telemetry/entry_view.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::telemetry {
namespace {

entry_map format3(const std::string& ts, const std::string& io) {
  return {{"v", "3"},           {"imei", "356307042441013"},
          {"codec", "8E"},      {"ts", ts},
          {"pri", "0"},         {"lon", "252616688"},
          {"lat", "546992512"}, {"alt", "105"},
          {"ang", "90"},        {"sat", "12"},
          {"spd", "41"},        {"evt", "0"},
          {"io", io},           {"gen", ""}};
}

io_dictionary fmb() {
  std::string error;
  return *io_dictionary::builtin("fmb", error);
}

TEST(EntryView, TsIsAlwaysTheStoredStringAndTimeItsIsoForm) {
  const auto j = entry_json("1-0", format3("18446744073709551615", "[]"), nullptr);
  EXPECT_EQ(j["ts"], "18446744073709551615");
  EXPECT_EQ(j["time"], "+584556019-04-03T14:25:51.615Z");
  const auto small = entry_json("1-0", format3("0", "[]"), nullptr);
  EXPECT_EQ(small["ts"], "0");
  EXPECT_EQ(small["time"], "1970-01-01T00:00:00.000Z");
  // Not a time at all: kept as stored, no time.
  const auto junk = entry_json("1-0", format3("-1", "[]"), nullptr);
  EXPECT_EQ(junk["ts"], "-1");
  EXPECT_FALSE(junk.contains("time"));
}

TEST(EntryView, NamesShowErrorStatesAndBytesNeverAsMeasurements) {
  const auto names = fmb();
  const auto j = entry_json(
      "1-0", format3("1700000000000", R"([[72,"3000"],[73,"215"],[66,{"hex":"1234"}],[9999,"7"]])"),
      &names);
  EXPECT_EQ(j["io_named"],
            nlohmann::ordered_json::parse(
                R"({"dallas_temperature_1":{"error":"not_connected"},)"
                R"("dallas_temperature_2":21.5,"external_voltage":{"hex":"1234"}})"));
  EXPECT_EQ(entry_line(j, &names),
            "2023-11-14T22:13:20.000Z 356307042441013 lat 54.6992512 lon 25.2616688 alt 105 m "
            "speed 41 km/h angle 90 sats 12 io {dallas_temperature_1=error:not_connected, "
            "dallas_temperature_2=21.5 \xC2\xB0"
            "C, external_voltage=0x1234, 9999=7}");
}

// Format 4 records each integer's wire size: IO 72 sent in 2 bytes as FFF6 is -1.0 °C,
// and the size the dictionary did not expect (4) is flagged, in JSON and in the line.
TEST(EntryView, AValueIsReadAtItsWireSizeAndADifferentSizeIsFlagged) {
  const auto names = fmb();
  auto f = format3("1700000000000", R"([[72,"65526",2],[73,"4294967286",4],[239,"1",1]])");
  f["v"] = "4";
  const auto j = entry_json("1-0", f, &names);
  EXPECT_EQ(j["io"], nlohmann::ordered_json::parse(f["io"]));
  EXPECT_EQ(j["io_named"], nlohmann::ordered_json::parse(R"({"dallas_temperature_1":-1.0,)"
                                                         R"("dallas_temperature_2":-1.0,)"
                                                         R"("ignition":"1"})"));
  EXPECT_EQ(j["io_size_mismatch"],
            nlohmann::ordered_json::parse(R"([{"id":72,"size":2,"dictionary_size":4}])"));
  EXPECT_NE(entry_line(j, &names).find(
                "dallas_temperature_1=-1 \xC2\xB0"
                "C (2 bytes on the wire, the dictionary says 4), dallas_temperature_2=-1 "
                "\xC2\xB0"
                "C, ignition=1}"),
            std::string::npos)
      << entry_line(j, &names);
  // Without names there is nothing to disagree with.
  EXPECT_FALSE(entry_json("1-0", f, nullptr).contains("io_size_mismatch"));
}

TEST(EntryView, ALineIsSafeForATerminalWhateverTheEntryHolds) {
  auto f = format3("1700000000000", "[]");
  f["imei"] = "\x1B]0;owned\x07";
  const auto line = entry_line(entry_json("1-0", f, nullptr), nullptr);
  EXPECT_EQ(line.find('\x1B'), std::string::npos) << line;
  EXPECT_NE(line.find("\\x1b]0;owned\\x07"), std::string::npos) << line;
}

}  // namespace
}  // namespace tgw::infra::telemetry
