#include "infra/telemetry/io_dictionary_file.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/support/run_tgw.hpp"

namespace tgw::infra::telemetry {
namespace {

constexpr const char* csv = R"(# An operator's own CAN elements, and a Dallas sensor.
id,name,title,families,size,kind,multiplier,unit,errors
72,dallas_temperature_1,Dallas Temperature 1,fmb;fmc,4,signed,0.1,°C,850=sensor_not_ready;3000=not_connected
10001,can_fuel_level,"CAN fuel level, %",fmb,1,unsigned,,%,
10002,can_vin,,fmc,17,bytes,,,
)";

TEST(IoDictionaryFile, ACsvDictionaryHasEveryColumn) {
  std::string error;
  const auto fmb = io_dictionary::from_text(csv, "fmb", "test.csv", error);
  ASSERT_TRUE(fmb) << error;
  EXPECT_EQ(fmb->size(), 2U);
  const auto* dallas = fmb->find(72);
  ASSERT_NE(dallas, nullptr);
  EXPECT_EQ(dallas->kind, io_value_kind::signed_integer);
  EXPECT_EQ(dallas->bytes, 4);
  EXPECT_DOUBLE_EQ(dallas->multiplier, 0.1);
  EXPECT_EQ(dallas->unit, "°C");
  ASSERT_NE(dallas->error_of(3000), nullptr);
  EXPECT_EQ(*dallas->error_of(3000), "not_connected");
  EXPECT_EQ(dallas->error_of(300), nullptr);
  EXPECT_EQ(fmb->find(10001)->title, "CAN fuel level, %");
  EXPECT_EQ(fmb->find(10002), nullptr);  // fmc only
  const auto fmc = io_dictionary::from_text(csv, "fmc", "test.csv", error);
  ASSERT_TRUE(fmc) << error;
  EXPECT_EQ(fmc->find(10002)->kind, io_value_kind::bytes);
}

TEST(IoDictionaryFile, TheShippedTableHasEveryFamilyAndTheDallasErrorStates) {
  // The shipped table: FMB, FMC and FMM share the FMB AVL ID list; Dallas error codes.
  std::string error;
  for (const char* family : {"fmb", "fmc", "fmm"}) {
    const auto d = io_dictionary::builtin(family, error);
    ASSERT_TRUE(d) << error;
    EXPECT_EQ(d->size(), 51U) << family;
    for (const int id : {72, 73, 74, 75}) {
      const auto* info = d->find(static_cast<std::uint16_t>(id));
      ASSERT_NE(info, nullptr);
      EXPECT_EQ(info->errors, (std::vector<std::pair<std::uint64_t, std::string>>{
                                  {850, "sensor_not_ready"},
                                  {2000, "value_read_error"},
                                  {3000, "not_connected"},
                                  {4000, "id_failed"},
                                  {5000, "same_id_as_sensor_1"}}));
    }
  }
}

TEST(IoDictionaryFile, EachMistakeIsNamedWithItsPlace) {
  const std::pair<std::string, std::string> cases[] = {
      {"id,name,families\n",
       "f.csv:1: the header has no column 'size' (columns: id, name, "
       "title, families, size, kind, multiplier, unit, errors)"},
      {"id,name,families,size\n1,x,fmb\n", "f.csv:2: 3 fields, the header has 4"},
      {"id,name,families,size\n70000,x,fmb,1\n", "f.csv:2: id '70000' is not 0-65535"},
      {"id,name,families,size\n1,Ignition,fmb,1\n",
       "f.csv:2: name 'Ignition' is not snake_case (a-z, 0-9, _)"},
      {"id,name,families,size\n1,x,,1\n", "f.csv:2: no model family"},
      {"id,name,families,size\n1,x,fmb,3\n", "f.csv:2: size '3' is not 1, 2, 4 or 8"},
      {"id,name,families,size,kind\n1,x,fmb,1,float\n",
       "f.csv:2: kind 'float' is not unsigned, signed or bytes"},
      {"id,name,families,size,multiplier\n1,x,fmb,1,-2\n",
       "f.csv:2: multiplier '-2' is not a positive number"},
      {"id,name,families,size,errors\n1,x,fmb,1,3000\n",
       "f.csv:2: errors '3000' is not <raw value>=<state>"},
      {"id,name,families,size,errors\n1,x,fmb,1,x=off\n",
       "f.csv:2: error code 'x' is not a raw value (a decimal integer)"},
      {"id,name,families,size,errors\n1,x,fmb,1,3=Not connected\n",
       "f.csv:2: error code 3 names 'Not connected', not snake_case"},
      {"id,name,families,size\n1,x,fmb,1\n1,y,fmb,1\n",
       "f.csv: id 1 is listed twice for family 'fmb'"},
      {"id,name,families,size\n1,x,fmb,1\n2,x,fmb,1\n",
       "f.csv: ids 1 and 2 share the name 'x' in family 'fmb'"},
      {"id,name,families,size\n1,x,fmc,1\n", "f.csv has no IO elements for model 'fmb'"},
      {R"({"elements": 1})", "f.csv: not a JSON object with an \"elements\" array"},
      {R"({"elements": [{"id": 1, "name": "x", "families": ["fmb"], "size": 1, "errors": [1]}]})",
       "f.csv: element 1: errors is not an object of raw value -> state"},
      {R"({"elements": [{"id": 1, "name": "x", "families": [], "size": 1}]})",
       "f.csv: element 1 (id 1): no model family"},
      // A misspelt key would drop what it says: refused, with the keys there are.
      {R"({"elements": [{"id": 66, "name": "x", "families": ["fmb"], "size": 2, "mulitplier": 0.001}]})",
       "f.csv: element 1 (id 66): unknown key 'mulitplier' (keys: id, name, title, families, "
       "size, kind, multiplier, unit, errors)"},
      {R"({"element": [], "elements": []})",
       "f.csv: unknown key 'element' (keys: about, sources, families, elements)"},
      {"id,name,families,size,mulitplier\n66,x,fmb,2,0.001\n",
       "f.csv:1: unknown column 'mulitplier' (columns: id, name, title, families, size, kind, "
       "multiplier, unit, errors)"},
      // An error code the element's size cannot carry never matches.
      {"id,name,families,size,errors\n1,x,fmb,1,3000=not_connected\n",
       "f.csv:2: error code 3000 does not fit in 1 byte (0-255)"},
      {"id,name,families,size,errors\n1,x,fmb,2,65536=not_connected\n",
       "f.csv:2: error code 65536 does not fit in 2 bytes (0-65535)"},
      {"id,name,families,size,kind,errors\n1,x,fmb,8,bytes,1=off\n",
       "f.csv:2: kind bytes has no error codes (an NX value is bytes, never a raw number)"},
  };
  for (const auto& [text, expected] : cases) {
    std::string error;
    EXPECT_FALSE(io_dictionary::from_text(text, "fmb", "f.csv", error)) << text;
    EXPECT_EQ(error, expected) << text;
  }
}

TEST(IoDictionaryFile, AnErrorCodeThatFillsTheSizeIsAccepted) {
  std::string error;
  const auto d = io_dictionary::from_text(
      "id,name,families,size,errors\n1,x,fmb,1,255=off\n2,y,fmb,8,18446744073709551615=off\n",
      "fmb", "f.csv", error);
  ASSERT_TRUE(d) << error;
  EXPECT_NE(d->find(1)->error_of(255), nullptr);
  EXPECT_NE(d->find(2)->error_of(18446744073709551615U), nullptr);
}

// Spreadsheets write "UTF-8 with BOM"; the mark is no part of the header.
TEST(IoDictionaryFile, AByteOrderMarkIsSkipped) {
  for (const std::string& text :
       {std::string("\xEF\xBB\xBFid,name,families,size\n1,x,fmb,1\n"),
        std::string("\xEF\xBB\xBF{\"elements\": [{\"id\": 1, \"name\": \"x\", "
                    "\"families\": [\"fmb\"], \"size\": 1}]}")}) {
    std::string error;
    const auto d = io_dictionary::from_text(text, "fmb", "f", error);
    ASSERT_TRUE(d) << error << ": " << text;
    EXPECT_EQ(d->find(1)->name, "x");
  }
}

// A file cut short (a copy interrupted, an editor's crash) says where it broke off.
TEST(IoDictionaryFile, BrokenJsonSaysWhere) {
  const std::pair<std::string, std::string> cases[] = {
      {"{\"elements\": [\n  {\"id\": 1, \"name\": \"x\",\n", "f.json:3:1: not valid JSON: "},
      // Where the parser stopped: after the string it did not expect, as jq says too.
      {"{\"elements\": [\n  {\"id\": 1 \"name\": \"x\"}]}", "f.json:2:17: not valid JSON: "},
  };
  for (const auto& [text, expected] : cases) {
    std::string error;
    EXPECT_FALSE(io_dictionary::from_text(text, "fmb", "f.json", error)) << text;
    EXPECT_TRUE(error.starts_with(expected)) << error;
    EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
  }
}

// decode, telemetry tail and the sink take the same file through --io-dictionary or
// TGW_IO_DICTIONARY; decode shows it here.
TEST(IoDictionaryFile, DecodeNamesWithTheFileGivenByFlagOrEnvironment) {
  const std::string path = ::testing::TempDir() + "/dictionary.csv";
  {
    std::ofstream out(path);
    out << "id,name,families,size,kind,multiplier,unit,errors\n"
           "66,supply_voltage,fmb,2,unsigned,0.001,V,65535=not_measured\n";
  }
  constexpr const char* wiki_codec8 =
      "000000000000003608010000016B40D8EA30010000000000000000000000000000000105021503010101425E0F01"
      "F10000601A014E0000000000000000010000C7CF";
  const auto by_flag =
      test::run_tgw(std::string("decode --names --io-dictionary ") + path + " " + wiki_codec8);
  EXPECT_EQ(by_flag.exit_code, 0) << by_flag.out;
  EXPECT_NE(by_flag.out.find(R"("name":"supply_voltage","named":24.079,"unit":"V")"),
            std::string::npos)
      << by_flag.out;
  EXPECT_EQ(by_flag.out.find("gsm_signal"), std::string::npos) << "the shipped table was used";
  const auto by_env = test::run_command("TGW_IO_DICTIONARY=" + path + " " + TGW_BINARY +
                                        " decode --names " + wiki_codec8);
  EXPECT_EQ(by_env.out, by_flag.out);
  const auto missing =
      test::run_tgw(std::string("decode --names --io-dictionary /nonexistent ") + wiki_codec8);
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tgw::infra::telemetry
