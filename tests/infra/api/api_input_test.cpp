// The input rules on their own: query strings, times, durations and command bodies.
#include "infra/api/api_input.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::api {
namespace {

TEST(ApiInput, QueryParametersDecodeAndRefuseWhatIsNotKnown) {
  api_error e;
  const auto q = query_params::parse("imei=1&imei=2&types=record%2Csession&x=a+b",
                                     {"imei", "types", "x"}, {"imei"}, e);
  ASSERT_TRUE(q) << e.message;
  EXPECT_EQ(q->all("imei"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(q->one("types"), "record,session");
  EXPECT_EQ(q->one("x"), "a b");
  EXPECT_FALSE(q->one("none"));
  EXPECT_FALSE(query_params::parse("types=a&types=b", {"types"}, {}, e));
  EXPECT_EQ(e.code, "repeated_parameter");
  EXPECT_FALSE(query_params::parse("other=1", {"types"}, {}, e));
  EXPECT_EQ(e.code, "unknown_parameter");
}

TEST(ApiInput, TimesAreMillisecondsOrIso8601Utc) {
  EXPECT_EQ(parse_time("1700000000000"), 1700000000000);
  EXPECT_EQ(parse_time("2023-11-14T22:13:20Z"), 1700000000000);
  EXPECT_EQ(parse_time("2023-11-14T22:13:20.123Z"), 1700000000123);
  EXPECT_EQ(parse_time("2023-11-14"), 1699920000000);
  EXPECT_FALSE(parse_time("yesterday"));
  EXPECT_FALSE(parse_time("2023-11-14T22:13:20.1Z"));
  EXPECT_FALSE(parse_time(""));
}

TEST(ApiInput, ACommandBodyIsCheckedWhole) {
  api_error e;
  const command_rules rules;
  const auto c = parse_command_body(
      R"({"text":"setdigout 1","codec":14,"timeout_s":0,"queue_if_offline":true})",
      "application/json; charset=utf-8", rules, e);
  ASSERT_TRUE(c) << e.message;
  EXPECT_EQ(c->text, "setdigout 1");
  EXPECT_EQ(c->codec, 14);
  EXPECT_EQ(c->timeout_s, 0);
  EXPECT_TRUE(c->queue_if_offline);
  EXPECT_TRUE(parse_command_body(R"({"text":"getinfo"})", std::nullopt, rules, e));
  EXPECT_FALSE(parse_command_body(R"({"text":"getinfo"})", "application/jsonx", rules, e));
  EXPECT_EQ(e.status, 415U);
  EXPECT_FALSE(parse_command_body(R"({"text":"a\tb"})", std::nullopt, rules, e));
  EXPECT_EQ(e.message,
            "text holds a control character (0x09 at byte 1): a device reads its "
            "command as one line");
  command_rules lenient;
  lenient.allow_control_characters = true;
  EXPECT_TRUE(parse_command_body(R"({"text":"a\tb"})", std::nullopt, lenient, e));
}

TEST(ApiInput, TheFingerprintIgnoresSpacingAndKeyOrder) {
  api_error e;
  const command_rules rules;
  const auto a = parse_command_body(R"({"text":"getinfo","codec":12})", std::nullopt, rules, e);
  const auto b =
      parse_command_body(R"({ "codec" : 12 , "text" : "getinfo" })", std::nullopt, rules, e);
  const auto c = parse_command_body(R"({"text":"getinfo","codec":14})", std::nullopt, rules, e);
  EXPECT_EQ(fingerprint("1", *a), fingerprint("1", *b));
  EXPECT_NE(fingerprint("1", *a), fingerprint("1", *c));
  EXPECT_NE(fingerprint("1", *a), fingerprint("2", *a));
}

TEST(ApiInput, AnIdempotencyKeyIsPrintableAsciiWithoutSpaces) {
  EXPECT_FALSE(idempotency_key_problem("2f1c0e6e-0b7a-4f5e-9b0e-3f5c2a1d9e77"));
  EXPECT_TRUE(idempotency_key_problem(""));
  EXPECT_TRUE(idempotency_key_problem("a b"));
  EXPECT_TRUE(idempotency_key_problem("caf\xc3\xa9"));
}

}  // namespace
}  // namespace tgw::infra::api
