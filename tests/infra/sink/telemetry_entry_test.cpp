#include "infra/sink/telemetry_entry.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tgw::infra::sink {
namespace {

telemetry::io_dictionary fmb() {
  std::string error;
  auto names = telemetry::io_dictionary::builtin("fmb", error);
  EXPECT_TRUE(names) << error;
  return *names;
}

entry_fields v2_entry() {
  return {{"v", "2"},
          {"imei", "356307042441013"},
          {"codec", "8E"},
          {"ts", "1700000000123"},
          {"pri", "1"},
          {"lon", "252616688"},
          {"lat", "-546992512"},
          {"alt", "-12"},
          {"ang", "359"},
          {"sat", "12"},
          {"spd", "41"},
          {"evt", "239"},
          {"io", R"({"239":1,"66":12345,"78":"18446744073709551615","385":"0a0b"})"},
          {"gen", ""}};
}

// The same record as format 3 writes it.
entry_fields v3_entry() {
  entry_fields f = v2_entry();
  f[0].second = "3";
  f[12].second = R"([[239,"1"],[66,"12345"],[78,"18446744073709551615"],[385,{"hex":"0a0b"}]])";
  return f;
}

// The same record as format 4 writes it, with each integer's wire size.
entry_fields v4_entry() {
  entry_fields f = v2_entry();
  f[0].second = "4";
  f[12].second =
      R"([[239,"1",1],[66,"12345",2],[78,"18446744073709551615",8],[385,{"hex":"0a0b"}]])";
  return f;
}

entry_fields with(entry_fields f, const std::string& key, const std::string& value) {
  for (auto& [k, v] : f)
    if (k == key) {
      v = value;
      return f;
    }
  f.emplace_back(key, value);
  return f;
}

entry_fields without(entry_fields f, const std::string& key) {
  std::erase_if(f, [&](const auto& kv) { return kv.first == key; });
  return f;
}

std::string reason_of(const std::variant<position_row, rejected_entry>& r) {
  const auto* rejected = std::get_if<rejected_entry>(&r);
  return rejected ? rejected->reason : "";
}

TEST(TelemetryEntry, AFormat2EntryBecomesARowWithEveryField) {
  const auto parsed = parse_entry("1700000000999-3", v2_entry(), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  const auto& row = std::get<position_row>(parsed);
  EXPECT_EQ(row.stream_id, "1700000000999-3");
  EXPECT_EQ(row.stored_ms, 1700000000999);
  EXPECT_EQ(row.imei, "356307042441013");
  EXPECT_EQ(row.codec, "8E");
  EXPECT_EQ(row.ts_ms, 1700000000123);
  EXPECT_EQ(row.priority, 1);
  EXPECT_EQ(row.longitude_e7, 252616688);
  EXPECT_EQ(row.latitude_e7, -546992512);
  EXPECT_EQ(row.altitude, -12);
  EXPECT_EQ(row.angle, 359);
  EXPECT_EQ(row.satellites, 12);
  EXPECT_EQ(row.speed, 41);
  EXPECT_EQ(row.event_io, 239);
  EXPECT_FALSE(row.generation);
  EXPECT_TRUE(row.extra.empty());
  // The io object becomes the format 3 array, every value of its kind: integers as
  // decimal strings, the NX value (a hex string in format 2) as {"hex":...}.
  EXPECT_EQ(nlohmann::json::parse(row.io), nlohmann::json::parse(std::get<1>(v3_entry()[12])));
  // Named: ignition and external voltage (66, in mV, 0.001 V) are in the table.
  const auto named = nlohmann::json::parse(row.io_named);
  EXPECT_EQ(named["ignition"], "1");
  EXPECT_DOUBLE_EQ(named["external_voltage"].get<double>(), 12.345);
}

TEST(TelemetryEntry, AFormat3EntryKeepsItsIoAndNamesEveryKindApart) {
  const auto parsed = parse_entry("1-0", v3_entry(), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  const auto& row = std::get<position_row>(parsed);
  EXPECT_EQ(row.io, std::get<1>(v3_entry()[12]));
  EXPECT_EQ(nlohmann::json::parse(row.io_named),
            nlohmann::json::parse(
                R"({"ignition":"1","external_voltage":12.345,"ibutton":"18446744073709551615"})"));
}

TEST(TelemetryEntry, AFormat3IoWithSpacesReadsAsTheCompactOne) {
  const auto spaced = R"([ [239, "1"], [66, "12345"], [78, "18446744073709551615"],
                           [385, { "hex": "0a0b" }] ])";
  const auto parsed = parse_entry("1-0", with(v3_entry(), "io", spaced), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  EXPECT_EQ(nlohmann::json::parse(std::get<position_row>(parsed).io),
            nlohmann::json::parse(std::get<1>(v3_entry()[12])));
}

TEST(TelemetryEntry, ACodec16EntryKeepsItsGenerationType) {
  const auto parsed = parse_entry("1-0", with(with(v3_entry(), "codec", "16"), "gen", "5"), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  EXPECT_EQ(std::get<position_row>(parsed).generation, 5);
}

TEST(TelemetryEntry, AFormat1EntryHasNoCodecAndStillBecomesARow) {
  auto old = without(without(without(v2_entry(), "v"), "codec"), "gen");
  const auto parsed = parse_entry("1-0", old, fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  EXPECT_FALSE(std::get<position_row>(parsed).codec);
}

TEST(TelemetryEntry, FieldsItDoesNotKnowAreKeptInExtra) {
  const auto parsed = parse_entry("1-0", with(v2_entry(), "odo_src", "can"), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  EXPECT_EQ(nlohmann::json::parse(std::get<position_row>(parsed).extra),
            nlohmann::json({{"odo_src", "can"}}));
}

TEST(TelemetryEntry, ANewerFormatIsRejectedWithTheVersionNamed) {
  const auto parsed = parse_entry("1-0", with(v4_entry(), "v", "5"), fmb());
  EXPECT_EQ(reason_of(parsed),
            "entry format v=5 is newer than this sink reads (v=4); upgrade tgw sink");
  const auto& rejected = std::get<rejected_entry>(parsed);
  EXPECT_EQ(rejected.stream_id, "1-0");
  EXPECT_EQ(nlohmann::json::parse(rejected.fields)["v"], "5");
}

TEST(TelemetryEntry, EachMalformedFieldIsRejectedPrecisely) {
  const std::vector<std::pair<entry_fields, std::string>> cases = {
      {without(v2_entry(), "lat"), "field lat is missing"},
      {without(v2_entry(), "codec"), "field codec is missing"},
      {with(v2_entry(), "imei", "35630704244101x"),
       "field imei '35630704244101x' is not 15 or 16 digits"},
      {with(v2_entry(), "codec", "12"), "field codec '12' is not 8, 8E or 16"},
      {with(v2_entry(), "ts", "soon"), "field ts 'soon' is not an integer"},
      {with(v2_entry(), "ts", "-5"), "field ts -5 is out of range [0, 253402300799999]"},
      {with(v2_entry(), "sat", "256"), "field sat 256 is out of range [0, 255]"},
      {with(v2_entry(), "lon", "2147483648"),
       "field lon 2147483648 is out of range [-2147483648, 2147483647]"},
      {with(v2_entry(), "gen", "x"), "field gen 'x' is not 0-255"},
      {with(v2_entry(), "io", "[1,2]"), "field io is not a JSON object"},
      {with(v2_entry(), "io", "{\"239\":"), "field io is not a JSON object"},
      {with(v2_entry(), "io", R"({"ign":1})"), "field io has key 'ign', not an IO id"},
      {with(v2_entry(), "io", R"({"1":1.5})"),
       "field io has id 1 with a value that is neither an unsigned integer nor a decimal or "
       "hex string"},
      {with(v2_entry(), "io", R"({"1":-1})"),
       "field io has id 1 with a value that is neither an unsigned integer nor a decimal or "
       "hex string"},
      {with(v3_entry(), "io", R"({"1":"1"})"), "field io is not a JSON array"},
      {with(v3_entry(), "io", R"([[1,1]])"),
       "field io has id 1 with a value that is neither a decimal string nor {\"hex\":...}"},
      {with(v3_entry(), "io", R"([[1,"01"]])"),
       "field io has id 1 with a value that is neither a decimal string nor {\"hex\":...}"},
      {with(v3_entry(), "io", R"([[1,"18446744073709551616"]])"),
       "field io has id 1 with a value that is neither a decimal string nor {\"hex\":...}"},
      {with(v3_entry(), "io", R"([[1,{"hex":"abc"}]])"),
       "field io has id 1 with a value that is neither a decimal string nor {\"hex\":...}"},
      {with(v3_entry(), "io", R"([[65536,"1"]])"),
       "field io has an element that is not [id, value] with an id 0-65535"},
      {with(v3_entry(), "io", R"([[1,"1",2]])"),
       "field io has an element that is not [id, value] with an id 0-65535"},
      {with(v2_entry(), "v", "two"), "field v 'two' is not a format version"},
  };
  for (const auto& [fields, reason] : cases)
    EXPECT_EQ(reason_of(parse_entry("1-0", fields, fmb())), reason);
  EXPECT_EQ(reason_of(parse_entry("nope", v2_entry(), fmb())), "entry id 'nope' is not <ms>-<seq>");
}

TEST(TelemetryEntry, BytesPostgresCannotStoreAreEscapedInTheReasonAndReplacedInTheFields) {
  const std::string junk("35\0\xff\\", 5);
  const auto parsed =
      parse_entry("1-0", with(with(v2_entry(), "imei", junk), std::string("k\0", 2), junk), fmb());
  EXPECT_EQ(reason_of(parsed), "field imei '35\\x00\\xff\\x5c' is not 15 or 16 digits");
  const auto fields = nlohmann::json::parse(std::get<rejected_entry>(parsed).fields);
  EXPECT_EQ(fields["imei"], "35\uFFFD\uFFFD\\");
  EXPECT_TRUE(fields.contains("k\uFFFD"));
  const auto long_value =
      parse_entry("1-0", with(v2_entry(), "codec", std::string(100, 'x')), fmb());
  EXPECT_EQ(reason_of(long_value),
            "field codec '" + std::string(40, 'x') + "...' is not 8, 8E or 16");
  // A NUL inside io is no value of any kind: rejected before it could reach jsonb.
  EXPECT_EQ(
      reason_of(parse_entry("1-0", with(v3_entry(), "io", R"([[1,{"hex":"a\u0000"}]])"), fmb())),
      "field io has id 1 with a value that is neither a decimal string nor {\"hex\":...}");
}

TEST(TelemetryEntry, AHexValueIsNamedAsItIsNeverAsANumber) {
  // Format 2's flat form, the same with spaces (the general parser), and format 3: NX
  // bytes stay bytes, even all digits ("1234": 0x12 0x34, not 1.234 V).
  const std::pair<const char*, const char*> cases[] = {
      {"2", R"({"66":"12ab","239":1})"},
      {"2", R"({ "66": "12ab", "239": 1 })"},
      {"2", R"({"66":"1234","239":1})"},
      {"3", R"([[66,{"hex":"1234"}],[239,"1"]])"},
  };
  for (const auto& [v, io] : cases) {
    const auto parsed = parse_entry("1-0", with(with(v2_entry(), "v", v), "io", io), fmb());
    ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
    const auto named = nlohmann::json::parse(std::get<position_row>(parsed).io_named);
    EXPECT_TRUE(named["external_voltage"].is_object()) << io;
    EXPECT_EQ(named["ignition"], "1") << io;
  }
}

TEST(TelemetryEntry, ARepeatedIdKeepsBothValuesInOrder) {
  for (const auto& [v, io] :
       {std::pair{"2", R"({"1":0,"1":1})"}, std::pair{"3", R"([[1,"0"],[1,"1"]])"}}) {
    const auto parsed = parse_entry("1-0", with(with(v2_entry(), "v", v), "io", io), fmb());
    ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
    const auto& row = std::get<position_row>(parsed);
    EXPECT_EQ(row.io, R"([[1,"0"],[1,"1"]])") << io;
    EXPECT_EQ(row.io_named, R"({"digital_input_1":["0","1"]})") << io;
  }
}

TEST(TelemetryEntry, ADallasErrorCodeIsAStateNotATemperature) {
  const auto parsed =
      parse_entry("1-0", with(v3_entry(), "io", R"([[72,"3000"],[73,"215"]])"), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  EXPECT_EQ(
      nlohmann::json::parse(std::get<position_row>(parsed).io_named),
      nlohmann::json::parse(
          R"({"dallas_temperature_1":{"error":"not_connected"},"dallas_temperature_2":21.5})"));
}

// IO 72 (Dallas temperature 1) is 4 bytes signed in the FMB table; a device that sends
// it in 2 bytes as FFF6 means -1.0 °C, which only its wire size tells.
TEST(TelemetryEntry, ASignedValueIsReadAtItsWireSize) {
  const auto parsed = parse_entry(
      "1-0", with(v4_entry(), "io", R"([[72,"65526",2],[73,"4294967286",4],[17,"65535",2]])"),
      fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  const auto& row = std::get<position_row>(parsed);
  EXPECT_EQ(row.io, R"([[72,"65526",2],[73,"4294967286",4],[17,"65535",2]])");
  EXPECT_EQ(nlohmann::json::parse(row.io_named),
            nlohmann::json::parse(R"({"dallas_temperature_1":-1.0,"dallas_temperature_2":-1.0,)"
                                  R"("axis_x":"-1"})"));
  // The size the dictionary did not expect is said.
  EXPECT_EQ(row.io_size_mismatches, (std::vector<telemetry::io_size_mismatch>{{72, 2, 4}}));
  // A format 3 entry recorded no size: the dictionary's is all there is.
  const auto older =
      parse_entry("1-0", with(v3_entry(), "io", R"([[72,"65526"],[73,"4294967286"]])"), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(older)) << reason_of(older);
  EXPECT_EQ(
      nlohmann::json::parse(std::get<position_row>(older).io_named),
      nlohmann::json::parse(R"({"dallas_temperature_1":6552.6,"dallas_temperature_2":-1.0})"));
  EXPECT_TRUE(std::get<position_row>(older).io_size_mismatches.empty());
}

TEST(TelemetryEntry, AFormat4EntryKeepsItsIoAsStored) {
  const auto parsed = parse_entry("1-0", v4_entry(), fmb());
  ASSERT_TRUE(std::holds_alternative<position_row>(parsed)) << reason_of(parsed);
  EXPECT_EQ(std::get<position_row>(parsed).io, v4_entry()[12].second);
}

TEST(TelemetryEntry, RecordTimesOutsideTheWindowAroundTheStoringTimeAreNamed) {
  constexpr std::int64_t day = 86'400'000;
  constexpr std::int64_t stored = 1'800'000'000'000;  // 2027-01-15T08:00:00Z
  position_row row;
  row.stored_ms = stored;
  const record_window window{10, 1};
  for (const std::int64_t ts : {stored, stored - 10 * day, stored + day}) {
    row.ts_ms = ts;
    EXPECT_FALSE(outside_window(row, window)) << ts;
  }
  row.ts_ms = stored - 10 * day - 1;
  EXPECT_EQ(outside_window(row, window),
            "field ts 1799135999999 (2027-01-05T07:59:59Z) is 10 days before the gateway stored "
            "it (2027-01-15T08:00:00Z): outside the plausible window (--max-record-age-days 10)");
  row.ts_ms = stored + day + 1;
  EXPECT_EQ(outside_window(row, window),
            "field ts 1800086400001 (2027-01-16T08:00:00Z) is 1 day after the gateway stored it "
            "(2027-01-15T08:00:00Z): outside the plausible window (--max-record-ahead-days 1)");
}

TEST(TelemetryEntry, EntryIdsGiveTheirStoringTime) {
  EXPECT_EQ(entry_id_ms("1700000000000-0"), 1700000000000);
  EXPECT_FALSE(entry_id_ms("1700000000000"));
  EXPECT_FALSE(entry_id_ms("-1"));
  EXPECT_FALSE(entry_id_ms("12-x"));
}

}  // namespace
}  // namespace tgw::infra::sink
