// Bad input, request by request: each malformed request (body, header, path, method,
// token) gets its own status and error code as a JSON error body, never a 500, and the
// API goes on serving the next one. Over the fake store: what is refused here is
// refused before any Redis work.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/infra/api/api_fixture.hpp"

namespace tgw::infra::api::test {
namespace {

struct bad_request {
  const char* what;
  std::string raw;
  int status;
  const char* code;
  const char* route;  ///< For the OpenAPI check.
};

class ApiBadInput : public ApiFixture {};

std::string json_body(const std::string& text) {
  return nlohmann::json{{"text", text}}.dump();
}

TEST_F(ApiBadInput, EveryMalformedRequestGetsItsStatusAndCode) {
  const std::string dev = std::string("/v1/devices/") + known_imei;
  const std::string cmd = dev + "/commands";
  const std::string plain = "GET /v1/devices HTTP/1.1\r\nHost: t\r\n";
  const std::vector<bad_request> table = {
      // Tokens and scopes.
      {"no token", plain + "\r\n", 401, "unauthorized", "/v1/devices"},
      {"basic credentials", plain + "Authorization: Basic dTpw\r\n\r\n", 401, "unauthorized",
       "/v1/devices"},
      {"unknown token", plain + "Authorization: Bearer tgw_00\r\n\r\n", 401, "unauthorized",
       "/v1/devices"},
      {"empty bearer", plain + "Authorization: Bearer \r\n\r\n", 401, "unauthorized",
       "/v1/devices"},
      {"read token sends a command",
       post(cmd, json_body("getinfo"), "Content-Type: application/json\r\n", "reader"), 403,
       "forbidden", "/v1/devices/{imei}/commands"},
      {"command token lists devices", get("/v1/devices", "sender"), 403, "forbidden",
       "/v1/devices"},
      {"read token follows events", get("/v1/events", "reader"), 403, "forbidden", "/v1/events"},
      // Paths.
      {"IMEI too short", get("/v1/devices/12345"), 400, "bad_imei", "/v1/devices/{imei}"},
      {"IMEI of letters", get("/v1/devices/abcdefghijklmno"), 400, "bad_imei",
       "/v1/devices/{imei}"},
      {"IMEI too long", get("/v1/devices/1234567890123456789/records"), 400, "bad_imei",
       "/v1/devices/{imei}/records"},
      {"command id not hex", get("/v1/commands/xyz"), 400, "bad_command_id", "/v1/commands/{id}"},
      {"unknown command", get("/v1/commands/0123456789abcdef0123456789abcdef"), 404,
       "unknown_command", "/v1/commands/{id}"},
      {"unknown device", get(std::string("/v1/devices/") + unknown_imei), 404, "unknown_device",
       "/v1/devices/{imei}"},
      {"unknown path", get("/v2/devices"), 404, "not_found", ""},
      {"bad escape in the path", get("/v1/devices/%zz"), 400, "malformed_path", ""},
      {"wrong method", "DELETE /v1/devices HTTP/1.1\r\nHost: t\r\n\r\n", 405, "method_not_allowed",
       ""},
      // Query parameters.
      {"limit 0", get("/v1/devices?limit=0"), 400, "bad_limit", "/v1/devices"},
      {"limit not a number", get("/v1/devices?limit=ten"), 400, "bad_limit", "/v1/devices"},
      {"limit over 1000", get("/v1/devices?limit=1001"), 400, "bad_limit", "/v1/devices"},
      {"online not a boolean", get("/v1/devices?online=yes"), 400, "bad_online", "/v1/devices"},
      {"silent_for not a duration", get("/v1/devices?silent_for=5x"), 400, "bad_silent_for",
       "/v1/devices"},
      {"unknown parameter", get("/v1/devices?colour=red"), 400, "unknown_parameter", "/v1/devices"},
      {"parameter twice", get("/v1/devices?limit=1&limit=2"), 400, "repeated_parameter",
       "/v1/devices"},
      {"cursor no IMEI", get("/v1/devices?cursor=xyz"), 400, "bad_cursor", "/v1/devices"},
      {"bad escape in the query", get("/v1/devices?limit=%G1"), 400, "bad_query", "/v1/devices"},
      {"from not a time", get(dev + "/records?from=yesterday"), 400, "bad_from",
       "/v1/devices/{imei}/records"},
      {"records cursor no stream id", get(dev + "/records?cursor=abc"), 400, "bad_cursor",
       "/v1/devices/{imei}/records"},
      {"to before from", get(dev + "/records?from=2000&to=1000"), 400, "bad_range",
       "/v1/devices/{imei}/records"},
      {"since not a time", get(dev + "/commands?since=soon"), 400, "bad_since",
       "/v1/devices/{imei}/commands"},
      {"wait negative", post(cmd + "?wait=-1", json_body("getinfo")), 400, "bad_wait",
       "/v1/devices/{imei}/commands"},
      {"wait over the maximum", post(cmd + "?wait=61", json_body("getinfo")), 400, "bad_wait",
       "/v1/devices/{imei}/commands"},
      {"event types unknown", get("/v1/events?types=records", "follower"), 400, "bad_types",
       "/v1/events"},
      {"event IMEI bad", get("/v1/events?imei=1", "follower"), 400, "bad_imei", "/v1/events"},
      // Bodies.
      {"body not JSON", post(cmd, "{text: getinfo}"), 400, "bad_json",
       "/v1/devices/{imei}/commands"},
      {"body an array", post(cmd, "[\"getinfo\"]"), 400, "bad_json", "/v1/devices/{imei}/commands"},
      {"body empty", post(cmd, ""), 400, "bad_json", "/v1/devices/{imei}/commands"},
      {"text missing", post(cmd, "{\"codec\":12}"), 400, "missing_text",
       "/v1/devices/{imei}/commands"},
      {"text empty", post(cmd, json_body("")), 400, "bad_text_length",
       "/v1/devices/{imei}/commands"},
      {"text too long", post(cmd, json_body(std::string(513, 'a'))), 400, "bad_text_length",
       "/v1/devices/{imei}/commands"},
      {"text with CR LF", post(cmd, json_body("getinfo\r\nsetparam 2001:x")), 400,
       "control_character", "/v1/devices/{imei}/commands"},
      {"text with NUL", post(cmd, "{\"text\":\"get\\u0000info\"}"), 400, "control_character",
       "/v1/devices/{imei}/commands"},
      {"text with ESC", post(cmd, json_body("\x1b[2Jgetinfo")), 400, "control_character",
       "/v1/devices/{imei}/commands"},
      {"text a number", post(cmd, "{\"text\":12}"), 400, "bad_text", "/v1/devices/{imei}/commands"},
      {"codec 13", post(cmd, "{\"text\":\"getinfo\",\"codec\":13}"), 400, "bad_codec",
       "/v1/devices/{imei}/commands"},
      {"codec a string", post(cmd, "{\"text\":\"getinfo\",\"codec\":\"12\"}"), 400, "bad_codec",
       "/v1/devices/{imei}/commands"},
      {"timeout negative", post(cmd, "{\"text\":\"getinfo\",\"timeout_s\":-1}"), 400, "bad_timeout",
       "/v1/devices/{imei}/commands"},
      {"queue flag a string", post(cmd, "{\"text\":\"getinfo\",\"queue_if_offline\":\"yes\"}"), 400,
       "bad_queue_if_offline", "/v1/devices/{imei}/commands"},
      {"unknown field", post(cmd, "{\"text\":\"getinfo\",\"priority\":1}"), 400, "unknown_field",
       "/v1/devices/{imei}/commands"},
      {"content type text", post(cmd, json_body("getinfo"), "Content-Type: text/plain\r\n"), 415,
       "unsupported_media_type", "/v1/devices/{imei}/commands"},
      // Headers.
      {"idempotency key with a space",
       post(cmd, json_body("getinfo"),
            "Content-Type: application/json\r\nIdempotency-Key: a b\r\n"),
       400, "bad_idempotency_key", "/v1/devices/{imei}/commands"},
      {"idempotency key too long",
       post(cmd, json_body("getinfo"),
            "Content-Type: application/json\r\nIdempotency-Key: " + std::string(256, 'k') + "\r\n"),
       400, "bad_idempotency_key", "/v1/devices/{imei}/commands"},
      {"command to a device never seen",
       post(std::string("/v1/devices/") + unknown_imei + "/commands", json_body("getinfo")), 404,
       "unknown_device", "/v1/devices/{imei}/commands"},
      {"head over its cap",
       "GET /v1/devices HTTP/1.1\r\nHost: t\r\nX-Filler: " + std::string(9000, 'x') + "\r\n\r\n",
       431, "headers_too_large", ""},
      {"body over its cap", "POST " + cmd + " HTTP/1.1\r\nHost: t\r\nContent-Length: 70000\r\n\r\n",
       413, "body_too_large", ""},
      {"not HTTP/1", "GET /v1/devices HTTP/2.0\r\nHost: t\r\n\r\n", 400, "malformed_request", ""},
      // What this instance cannot do now: no watcher, no event streams in this test.
      {"wait without a watcher", post(cmd + "?wait=5", json_body("getinfo")), 503, "unavailable",
       "/v1/devices/{imei}/commands"},
      {"events without a hub", get("/v1/events", "follower"), 503, "unavailable", "/v1/events"},
  };
  ASSERT_GE(table.size(), 30U);
  for (const bad_request& b : table) {
    const auto a = exchange(b.raw, b.route);
    EXPECT_EQ(a.status, b.status) << b.what << "\n" << a.headers << a.body;
    EXPECT_EQ(error_code(a), b.code) << b.what;
    EXPECT_EQ(a.content_type, "application/json") << b.what;
  }
  // Nothing of it reached the store, and the API still serves.
  EXPECT_EQ(state_->published, 0U);
  const auto ok = exchange(get("/v1/devices"), "/v1/devices");
  EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST_F(ApiBadInput, AStoreThatFailsIs503NeverA500) {
  state_->down = true;
  for (const std::string& target :
       {std::string("/v1/devices"), std::string("/v1/devices/") + known_imei,
        std::string("/v1/devices/") + known_imei + "/records",
        std::string("/v1/devices/") + known_imei + "/commands"}) {
    const auto a = exchange(get(target), "");
    EXPECT_EQ(a.status, 503) << target;
    EXPECT_EQ(error_code(a), "unavailable") << target;
    EXPECT_EQ(a.body.find("IO:"), std::string::npos) << "Redis' words stay inside: " << a.body;
  }
  const auto a =
      exchange(post(std::string("/v1/devices/") + known_imei + "/commands", json_body("getinfo")));
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(exchange("GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n").status, 503);
}

TEST_F(ApiBadInput, ATokenOverItsRateIs429WithRetryAfter) {
  // A burst of 2 and one more every 10 s: of 5 requests sent within 20 s (they take
  // milliseconds; a loaded machine has 20 s of slack), at most 3 pass.
  start(0.1, 2);
  int limited = 0;
  for (int i = 0; i < 5; ++i) {
    const auto a = exchange(get("/v1/devices"), "/v1/devices");
    if (a.status == 429) {
      ++limited;
      EXPECT_EQ(error_code(a), "rate_limited");
      EXPECT_NE(a.body.find("rate of 0.1 requests a second"), std::string::npos) << a.body;
      EXPECT_NE(a.headers.find("Retry-After: 10\r\n"), std::string::npos) << a.headers;
    }
  }
  EXPECT_GE(limited, 2);
  // Another token has a bucket of its own.
  EXPECT_EQ(exchange(get("/v1/events?types=x", "follower")).status, 400);
}

}  // namespace
}  // namespace tgw::infra::api::test
