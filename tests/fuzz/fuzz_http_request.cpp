// Fuzzes what the HTTP server makes of a client's bytes before a handler runs: Beast's
// request parser held to the server's head and body caps, fed the input after its
// first byte in two pieces (split where that byte says, as a client's segments may
// fall); then the server's own code: the refusal a failed read or an unservable head
// gets, the request handlers see (target split into path and query, header names
// folded), and routing with percent-decoding and {name} parameters. Oracles: a refusal
// is 400, 413 or 431; the path and query put back together are the target; a found
// route's parameters are non-empty; a wrong method names the methods that fit.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "infra/http/request_reading.hpp"
#include "infra/http/router.hpp"

namespace {

using namespace tgw::infra::http;
using tgw::fuzz::require;

const router& routes() {
  static const router r = [] {
    router made;
    const auto none = [](request, responder) {};
    made.add("GET", "/metrics", none);
    made.add("GET", "/v1/devices", none);
    made.add("GET", "/v1/devices/{imei}", none);
    made.add("GET", "/v1/devices/{imei}/records", none);
    made.add("POST", "/v1/devices/{imei}/commands", none);
    made.add("GET", "/v1/commands/{id}", none);
    return made;
  }();
  return r;
}

void check_refusal(const std::optional<refusal>& r) {
  if (r) require(r->status == 400 || r->status == 413 || r->status == 431);
}

void check_request(bhttp::request<bhttp::string_body>& parsed, std::size_t max_body) {
  const auto head_refusal = refusal_for(parsed);
  check_refusal(head_refusal);
  const bool served = !head_refusal;
  const request r = to_request(parsed, "192.0.2.1");
  require(r.body.size() <= max_body);
  require(r.path + (r.target.find('?') == std::string::npos ? "" : "?" + r.query) == r.target);
  require(r.path.find('?') == std::string::npos);
  for (const auto& [name, value] : r.headers)
    for (const char c : name) require(!(c >= 'A' && c <= 'Z'));
  if (!served) return;
  require(!r.path.empty() && r.path.front() == '/');
  const route_match m = routes().match(r.method, r.path);
  const route_match again = routes().match(r.method, r.path + "?" + r.query);
  (void)again;  // the query is the caller's to strip; matching it must not crash
  switch (m.result) {
    case route_match::outcome::found:
      require(m.run != nullptr);
      for (const auto& [name, value] : m.params) require(!name.empty() && !value.empty());
      break;
    case route_match::outcome::wrong_method:
      require(m.run == nullptr && !m.allow.empty());
      break;
    case route_match::outcome::not_found:
    case route_match::outcome::malformed_path:
      require(m.run == nullptr && m.params.empty());
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte says where the client's bytes, the rest, fall into two pieces.
  const std::uint8_t* bytes = data + 1;
  const std::size_t length = size - 1;
  server_limits limits;
  limits.max_header_bytes = 1024;
  limits.max_body_bytes = 256;
  request_parser parser;
  hold_to_limits(parser, limits);
  parser.eager(true);

  std::size_t used = 0;
  std::size_t available = data[0] % (length + 1);
  error_code ec;
  while (!parser.is_done()) {
    const std::size_t taken = parser.put(asio::buffer(bytes + used, available - used), ec);
    used += taken;
    require(used <= available);
    if (ec && ec != bhttp::error::need_more) break;
    // More is needed: need_more before the body, nothing taken within it (a body
    // shorter than its Content-Length).
    if (ec || taken == 0) {
      ec = {};
      if (available == length) {
        parser.put_eof(ec);
        break;
      }
      available = length;
    }
  }
  if (ec) {
    check_refusal(refusal_for(ec));
    return 0;
  }
  if (parser.is_done()) check_request(parser.get(), limits.max_body_bytes);
  return 0;
}
