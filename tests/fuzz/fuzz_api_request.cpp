// Fuzzes the application API's handling of a request once the HTTP server has read it:
// routing, the bearer token (none, an unknown one, or one of three with different
// scopes), the query string, the path parameters, the headers (Idempotency-Key,
// Content-Type, Last-Event-ID) and the JSON body, down to the store (the fake one of
// tests/support, so that a request that passes every check runs to its answer).
// Input: a byte choosing the token, then "METHOD TARGET\n", header lines "name: value\n",
// an empty line, and the body. Oracles: every request gets exactly one answer; no
// answer is a 500; every answer of 400 and above is a JSON error body with a code of
// lowercase words; a 2xx is JSON (or the plain text of the probes).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "infra/api/api_service.hpp"
#include "infra/api/tokens.hpp"
#include "tests/support/fake_api_store.hpp"

namespace {

using namespace tgw::infra;
using tgw::fuzz::require;

struct capture final : http::reply_sink {
  void deliver(std::optional<http::response> a) override {
    ++answers;
    answer = std::move(a);
  }
  int answers = 0;
  std::optional<http::response> answer;
};

struct api_under_test {
  http::router routes;
  std::string tokens[3];
};

api_under_test& under_test() {
  static api_under_test made = [] {
    api_under_test a;
    api::token_table t;
    const char* names[] = {"reader", "sender", "follower"};
    const api::scope scopes[] = {api::scope::read, api::scope::command, api::scope::events};
    for (int i = 0; i < 3; ++i) {
      a.tokens[i] = "tgw_fuzz" + std::to_string(i);
      t.add({names[i], static_cast<api::scope_set>(scopes[i]), api::sha256_hex(a.tokens[i]), 0});
    }
    const std::string file =
        (std::filesystem::temp_directory_path() / "tgw-fuzz-api-tokens").string();
    std::string error;
    require(api::write_token_file(file, t, error));
    auto state = std::make_shared<tgw::test::fake_api_state>();
    state->devices["356307042441013"] = tgw::test::known_device("356307042441013");
    api::api_parts parts;
    parts.work = std::make_shared<api::work_pool>(
        0, 16, [state] { return std::make_unique<tgw::test::fake_api_store>(state); });
    parts.access = std::make_shared<api::access_control>(file, false, 1e9, 1e9);
    require(parts.access->reload(error));
    parts.new_command_id = [] { return std::string("0123456789abcdef0123456789abcdef"); };
    api::api_settings settings;
    settings.openapi = "{}";
    a.routes = api::api_routes(settings, parts);
    return a;
  }();
  return made;
}

bool lowercase_words(const std::string& code) {
  if (code.empty()) return false;
  for (const char c : code)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  auto& a = under_test();
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto line = [&in]() {
    const auto nl = in.find('\n');
    std::string_view l = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view{} : in.substr(nl + 1);
    return l;
  };
  http::request r;
  const std::string_view first = line();
  const auto space = first.find(' ');
  if (space == std::string_view::npos) return 0;
  r.method = std::string(first.substr(0, space));
  r.target = std::string(first.substr(space + 1));
  const auto q = r.target.find('?');
  r.path = r.target.substr(0, q);
  if (q != std::string::npos) r.query = r.target.substr(q + 1);
  switch (data[0] % 5) {
    case 0:
      break;
    case 4:
      r.headers.emplace_back("authorization", "Bearer tgw_unknown");
      break;
    default:
      r.headers.emplace_back("authorization", "Bearer " + a.tokens[data[0] % 5 - 1]);
  }
  for (std::string_view h = line(); !h.empty(); h = line()) {
    const auto colon = h.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(h.substr(0, colon));
    for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    r.headers.emplace_back(std::move(name), std::string(h.substr(std::min(colon + 2, h.size()))));
  }
  r.body = std::string(in);
  r.peer = "192.0.2.1";

  const http::route_match m = a.routes.match(r.method, r.path);
  if (m.result != http::route_match::outcome::found) return 0;
  r.params = m.params;
  auto sink = std::make_shared<capture>();
  (*m.run)(std::move(r), http::responder(sink));
  require(sink->answers == 1);
  require(sink->answer.has_value());
  const http::response& out = *sink->answer;
  require(out.status != 500);
  if (out.status >= 400) {
    require(out.content_type == "application/json");
    const auto j = nlohmann::json::parse(out.body, nullptr, false);
    require(!j.is_discarded() && j.contains("error"));
    require(lowercase_words(j["error"].value("code", "")));
  } else if (out.content_type == "application/json") {
    require(!nlohmann::json::parse(out.body, nullptr, false).is_discarded());
  }
  return 0;
}
