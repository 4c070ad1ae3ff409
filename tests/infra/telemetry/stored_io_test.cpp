#include "infra/telemetry/stored_io.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::telemetry {
namespace {

using kind = stored_io_value::kind_t;

stored_io read(std::string_view text, int format, std::string_view codec = "8E") {
  std::string error;
  const auto values = read_io(text, format, codec, error);
  EXPECT_TRUE(values.has_value()) << text << ": " << error;
  return values.value_or(stored_io{});
}

std::string refused(std::string_view text, int format, std::string_view codec = "8E") {
  std::string error;
  EXPECT_FALSE(read_io(text, format, codec, error).has_value()) << text;
  return error;
}

TEST(StoredIo, Format3ReadsEveryKindInWireOrder) {
  const stored_io expected{{1, kind::integer, "0"},
                           {1, kind::integer, "1"},
                           {11, kind::integer, "9007199254740993"},
                           {11, kind::bytes, "9007199254740993"},
                           {78, kind::integer, "18446744073709551615"}};
  const std::string text =
      R"([[1,"0"],[1,"1"],[11,"9007199254740993"],[11,{"hex":"9007199254740993"}],)"
      R"([78,"18446744073709551615"]])";
  EXPECT_EQ(read(text, 3), expected);
  EXPECT_EQ(io_text(expected), text);
  // The same with whitespace, as any JSON writer may put it: the general parser.
  EXPECT_EQ(read(R"( [ [1, "0"], [1, "1"], [11, "9007199254740993"],
                      [11, { "hex": "9007199254740993" }], [78, "18446744073709551615"] ] )",
                 3),
            expected);
  EXPECT_EQ(read("[]", 3), stored_io{});
  EXPECT_EQ(expected[4].number(), 18446744073709551615ULL);
  EXPECT_FALSE(expected[3].number());
}

TEST(StoredIo, Format3RefusesWhatIsNoValueOfEitherKind) {
  for (const char* text :
       {R"([[1,1]])", R"([[1,"-1"]])", R"([[1,"01"]])", R"([[1,"18446744073709551616"]])",
        R"([[1,{"hex":"ABC"}]])", R"([[1,{"hex":"zz"}]])", R"([[1,{"hex":"AB","x":1}]])",
        R"([[1,"1.5"]])", R"([[1,null]])"})
    EXPECT_EQ(refused(text, 3),
              "io has id 1 with a value that is neither a decimal string nor {\"hex\":...}")
        << text;
  EXPECT_EQ(refused(R"([[70000,"1"]])", 3),
            "io has an element that is not [id, value] with an id 0-65535");
  EXPECT_EQ(refused(R"({"1":"1"})", 3), "io is not a JSON array");
  EXPECT_EQ(refused("[[1,\"1\"]", 3), "io is not a JSON array");
}

TEST(StoredIo, Format4KeepsEachIntegersWireSize) {
  const stored_io expected{{72, kind::integer, "65526", 2},
                           {1, kind::integer, "1", 1},
                           {11, kind::integer, "9007199254740993", 8},
                           {11, kind::bytes, "9007199254740993"},
                           {78, kind::integer, "4294967295", 4}};
  const std::string text =
      R"([[72,"65526",2],[1,"1",1],[11,"9007199254740993",8],[11,{"hex":"9007199254740993"}],)"
      R"([78,"4294967295",4]])";
  EXPECT_EQ(read(text, 4), expected);
  EXPECT_EQ(io_text(expected), text);
  EXPECT_EQ(io_json(expected), nlohmann::ordered_json::parse(text));
  EXPECT_EQ(read(R"( [ [72, "65526", 2], [1, "1", 1], [11, "9007199254740993", 8],
                      [11, { "hex": "9007199254740993" }], [78, "4294967295", 4] ] )",
                 4),
            expected);
  // Later formats read as format 4 reads.
  EXPECT_EQ(read(text, 5), expected);
  // An older entry's integers have no size, and keep none in the newest form.
  EXPECT_EQ(io_text(read(R"([[1,"1"]])", 3)), R"([[1,"1"]])");
}

TEST(StoredIo, Format4RefusesAnIntegerWithoutASizeThatHoldsIt) {
  const std::string no_size =
      "io has id 1 without a size after its value (1, 2, 4 or 8 bytes "
      "that hold it)";
  for (const char* text :
       {R"([[1,"1"]])", R"([[1,"1",3]])", R"([[1,"256",1]])", R"([[1,"65536",2]])",
        R"([[1,"4294967296",4]])", R"([[1,"1",0]])", R"([[1,"1","1"]])", R"([[1,"1",-1]])"})
    EXPECT_EQ(refused(text, 4), no_size) << text;
  EXPECT_EQ(refused(R"([[1,{"hex":"AB"},1]])", 4),
            "io has id 1 with a size after bytes, which have none");
  EXPECT_EQ(refused(R"([[1,"1",1,1]])", 4),
            "io has an element that is not [id, value, size] or [id, {\"hex\":...}] with an id "
            "0-65535");
  EXPECT_EQ(refused(R"([[1,1,1]])", 4),
            "io has id 1 with a value that is neither a decimal string nor {\"hex\":...}");
  // Format 3 had no sizes.
  EXPECT_EQ(refused(R"([[1,"1",1]])", 3),
            "io has an element that is not [id, value] with an id 0-65535");
}

TEST(StoredIo, Format2ReadsItsNumbersDecimalsAndHexByTheirKinds) {
  EXPECT_EQ(read(R"({"239":1,"78":"18446744073709551615","281":"DEAD01","66":"1234"})", 2),
            (stored_io{{239, kind::integer, "1"},
                       {78, kind::integer, "18446744073709551615"},
                       {281, kind::bytes, "DEAD01"},
                       // Digits, but a value format 2 wrote as a number: NX bytes.
                       {66, kind::bytes, "1234"}}));
  // Codec 8 and 16 have no NX elements: their strings are integers.
  EXPECT_EQ(read(R"({"78":"9007199254740993"})", 2, "16"),
            (stored_io{{78, kind::integer, "9007199254740993"}}));
  // The ambiguity format 3 removes: in Codec 8E an all-digit string above 2^53 - 1 is
  // read as the integer format 2 wrote for 8-byte values.
  EXPECT_EQ(read(R"({"11":"9007199254740993"})", 2),
            (stored_io{{11, kind::integer, "9007199254740993"}}));
  // Duplicate keys keep both values, in order.
  EXPECT_EQ(read(R"({"1":0,"1":1})", 2),
            (stored_io{{1, kind::integer, "0"}, {1, kind::integer, "1"}}));
  EXPECT_EQ(read("{}", 1), stored_io{});
}

TEST(StoredIo, Format2RefusesValuesOfNoKind) {
  const std::string no_kind =
      "io has id 1 with a value that is neither an unsigned integer nor a decimal or hex string";
  EXPECT_EQ(refused(R"({"1":-1})", 2), no_kind);
  EXPECT_EQ(refused(R"({"1":1.5})", 2), no_kind);
  EXPECT_EQ(refused(R"({"1":"xyz"})", 2), no_kind);
  EXPECT_EQ(refused(R"({"1":"ABC"})", 2), no_kind);      // odd hex
  EXPECT_EQ(refused(R"({"1":"AB"})", 2, "8"), no_kind);  // no NX in Codec 8
  EXPECT_EQ(refused(R"({"x":1})", 2), "io has key 'x', not an IO id");
  EXPECT_EQ(refused("[]", 2), "io is not a JSON object");
}

TEST(StoredIo, TheJsonFormIsTheTextForm) {
  const stored_io values{
      {1, kind::integer, "7"}, {2, kind::integer, "7", 2}, {385, kind::bytes, "0A0B"}};
  EXPECT_EQ(io_json(values), nlohmann::ordered_json::parse(io_text(values)));
}

}  // namespace
}  // namespace tgw::infra::telemetry
