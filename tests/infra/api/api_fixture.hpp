#pragma once

// An API on a real HTTP server, in this process, over the fake store: what a client
// sends goes through the server's parser, the routes, the token checks and the input
// rules, and comes back as bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "infra/api/api_service.hpp"
#include "infra/api/openapi_document.hpp"
#include "infra/api/tokens.hpp"
#include "infra/commands/command_publisher.hpp"
#include "infra/http/server.hpp"
#include "tests/support/api_response_log.hpp"
#include "tests/support/fake_api_store.hpp"
#include "tests/support/raw_http_client.hpp"

namespace tgw::infra::api::test {

inline constexpr const char* known_imei = "356307042441013";
inline constexpr const char* unknown_imei = "356307042441099";

class ApiFixture : public ::testing::Test {
 protected:
  void SetUp() override { start(); }

  void start(double rate = 1000, double burst = 1000) {
    server_.reset();
    tokens_file_ = ::testing::TempDir() + "/api-tokens-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name();
    token_table t;
    for (const auto& [name, scopes] :
         {std::pair{"reader", scope::read}, std::pair{"sender", scope::command},
          std::pair{"follower", scope::events}}) {
      const std::string token = new_token();
      tokens_[name] = token;
      t.add({name, static_cast<scope_set>(scopes), sha256_hex(token), 0});
    }
    std::string error;
    ASSERT_TRUE(write_token_file(tokens_file_, t, error)) << error;
    state_->devices[known_imei] = tgw::test::known_device(known_imei);
    auto access = std::make_shared<access_control>(tokens_file_, false, rate, burst);
    ASSERT_TRUE(access->reload(error)) << error;
    auto state = state_;
    parts_.work = std::make_shared<work_pool>(
        0, 16, [state] { return std::make_unique<tgw::test::fake_api_store>(state); });
    parts_.access = access;
    parts_.new_command_id = commands::new_command_id;
    settings_.openapi = std::string(openapi_document());
    settings_.name = "test";
    http::server_limits limits;
    limits.max_connections_per_address = 0;
    server_ = std::make_unique<http::server>("127.0.0.1:0", api_routes(settings_, parts_), limits);
  }

  /// Sends `raw` on a fresh connection; the answer (logged for the OpenAPI check under
  /// `route`, when given).
  tgw::test::raw_answer exchange(const std::string& raw, const std::string& route = {}) {
    tgw::test::raw_client c(server_->port());
    EXPECT_TRUE(c.send(raw));
    const auto a = tgw::test::split_answer(c.read_response());
    if (!route.empty())
      tgw::test::log_api_response(raw.substr(0, raw.find(' ')), route, a.status, a.content_type,
                                  a.body);
    return a;
  }

  std::string bearer(const std::string& name) {
    return "Authorization: Bearer " + tokens_[name] + "\r\n";
  }

  std::string get(const std::string& target, const std::string& who = "reader") {
    return "GET " + target + " HTTP/1.1\r\nHost: t\r\n" + bearer(who) + "\r\n";
  }
  std::string post(const std::string& target, const std::string& body,
                   const std::string& extra = "Content-Type: application/json\r\n",
                   const std::string& who = "sender") {
    return "POST " + target + " HTTP/1.1\r\nHost: t\r\n" + bearer(who) + extra +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  std::shared_ptr<tgw::test::fake_api_state> state_ = std::make_shared<tgw::test::fake_api_state>();
  std::map<std::string, std::string> tokens_;
  std::string tokens_file_;
  api_settings settings_;
  api_parts parts_;
  std::unique_ptr<http::server> server_;
};

/// The error code of an error body, or what the body is when it is none.
inline std::string error_code(const tgw::test::raw_answer& a) {
  const auto j = nlohmann::json::parse(a.body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("error"))
    return "not an error body: " + a.body;
  return j["error"].value("code", "no code");
}

}  // namespace tgw::infra::api::test
