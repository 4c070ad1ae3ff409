// Routing by method and path, without a socket: which handler a request reaches, what
// its parameters are, and which status a miss gets.
#include "infra/http/router.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace tgw::infra::http {
namespace {

using outcome = route_match::outcome;

// A router whose handlers answer with their own name, to tell which one matched.
router named_routes() {
  router r;
  const auto named = [](std::string name) {
    return [name](request, responder done) { done(response::text(200, name)); };
  };
  r.add("GET", "/v1/devices", named("list"));
  r.add("GET", "/v1/devices/{imei}", named("one"));
  r.add("POST", "/v1/devices/{imei}/commands", named("send"));
  r.add("GET", "/v1/devices/{imei}/commands", named("history"));
  r.add("GET", "/", named("root"));
  return r;
}

// The name of the handler `m` leads to.
std::string run(const route_match& m) {
  std::string said;
  struct capture final : reply_sink {
    explicit capture(std::string& out) : out_(out) {}
    void deliver(std::optional<response> r) override { out_ = r ? r->body : "nothing"; }
    std::string& out_;
  };
  (*m.run)(request{}, responder(std::make_shared<capture>(said)));
  return said;
}

TEST(Router, MatchesLiteralAndParameterSegments) {
  const router r = named_routes();
  auto m = r.match("GET", "/v1/devices");
  ASSERT_EQ(m.result, outcome::found);
  EXPECT_EQ(run(m), "list");
  EXPECT_TRUE(m.params.empty());
  m = r.match("GET", "/v1/devices/356307042441013");
  ASSERT_EQ(m.result, outcome::found);
  EXPECT_EQ(run(m), "one");
  EXPECT_EQ(m.params, (fields{{"imei", "356307042441013"}}));
  m = r.match("POST", "/v1/devices/356307042441013/commands");
  ASSERT_EQ(m.result, outcome::found);
  EXPECT_EQ(run(m), "send");
  m = r.match("GET", "/");
  ASSERT_EQ(m.result, outcome::found);
  EXPECT_EQ(run(m), "root");
}

TEST(Router, DecodesPercentEscapesBeforeComparing) {
  const router r = named_routes();
  auto m = r.match("GET", "/v1/%64evices/a%2Fb%20c");
  ASSERT_EQ(m.result, outcome::found);
  EXPECT_EQ(m.params, (fields{{"imei", "a/b c"}}));
  for (const char* bad : {"/v1/devices/%", "/v1/devices/%4", "/v1/devices/%zz", "v1/devices", ""})
    EXPECT_EQ(r.match("GET", bad).result, outcome::malformed_path) << bad;
}

TEST(Router, NamesTheMethodsAPathTakesForAWrongOne) {
  const router r = named_routes();
  auto m = r.match("DELETE", "/v1/devices/1/commands");
  EXPECT_EQ(m.result, outcome::wrong_method);
  EXPECT_EQ(m.allow, "POST, GET, HEAD");
  EXPECT_EQ(m.run, nullptr);
}

TEST(Router, MissesPathsNoPatternFits) {
  const router r = named_routes();
  for (const char* path : {"/v1", "/v1/devices/", "/v1/devices//commands", "/v1/devices/1/x",
                           "/v1/devices/1/commands/2", "//", "/V1/devices"})
    EXPECT_EQ(r.match("GET", path).result, outcome::not_found) << path;
}

TEST(Router, AnswersHeadWithTheGetRouteUnlessHeadHasItsOwn) {
  router r = named_routes();
  auto m = r.match("HEAD", "/v1/devices");
  ASSERT_EQ(m.result, outcome::found);
  EXPECT_EQ(run(m), "list");
  r.add("HEAD", "/v1/devices", [](request, responder done) { done(response::text(200, "head")); });
  m = r.match("HEAD", "/v1/devices");
  ASSERT_EQ(m.result, outcome::found);
  EXPECT_EQ(run(m), "head");
}

TEST(Router, RefusesPatternsItCannotMatch) {
  router r;
  const auto any = [](request, responder) {};
  EXPECT_THROW(r.add("GET", "v1", any), std::invalid_argument);
  EXPECT_THROW(r.add("GET", "/v1/{imei", any), std::invalid_argument);
  EXPECT_THROW(r.add("GET", "/v1/{}", any), std::invalid_argument);
  EXPECT_THROW(r.add("GET", "/v1/x{imei}", any), std::invalid_argument);
}

TEST(Responder, AnswersOnceAndSaysSoWhenDroppedUnanswered) {
  struct counting final : reply_sink {
    void deliver(std::optional<response> r) override { got.push_back(r ? r->status : 0); }
    std::vector<unsigned> got;
  };
  auto sink = std::make_shared<counting>();
  {
    responder done(sink);
    done(response::text(204, ""));
    done(response::text(200, "again"));
    EXPECT_TRUE(done.answered());
  }
  { responder dropped(sink); }
  EXPECT_EQ(sink->got, (std::vector<unsigned>{204, 0}));
}

}  // namespace
}  // namespace tgw::infra::http
