#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "infra/http/message.hpp"
#include "infra/http/responder.hpp"

namespace tgw::infra::http {

/// Answers a request through its responder, now or later, from any thread. It runs on
/// the io thread: it must not block (no Redis call, no file, no sleep); work that waits
/// goes elsewhere and answers through the responder. An exception is a 500.
using handler = std::function<void(request, responder)>;
/// A handler whose answer is at hand: cheap, non-blocking work only.
using answer_now = std::function<response(const request&)>;

/// How the server words the answers it gives itself: 404, 405, a malformed path or
/// request (400), a head or body over its cap (431, 413), a handler that failed (500) or
/// missed its deadline (503). `code` is a stable word ("not_found", "body_too_large"),
/// `message` a sentence. Plain text by default; an API answers JSON.
using refusal_renderer =
    std::function<response(unsigned status, std::string_view code, std::string_view message)>;

/// What a route may have that others do not.
struct route_options {
  /// The request deadline of this route's requests, instead of
  /// server_limits::request_timeout: for a route that may wait on purpose (a command
  /// awaited for up to a minute).
  std::optional<std::chrono::milliseconds> request_timeout;
};

/// What a path and method lead to.
struct route_match {
  enum class outcome : std::uint8_t {
    found,
    not_found,       ///< 404: no pattern fits the path
    wrong_method,    ///< 405: a pattern fits, not with this method; `allow` lists those that do
    malformed_path,  ///< 400: not starting with '/', or a bad percent escape
  };
  outcome result = outcome::not_found;
  const handler* run = nullptr;
  /// The route's place in the order routes were added, with found; the number of
  /// routes otherwise (the slot of server_stats::routes for requests no route took).
  std::size_t index = 0;
  std::optional<std::chrono::milliseconds> request_timeout;
  fields params;      ///< The pattern's {name} segments, percent-decoded.
  std::string allow;  ///< "GET, HEAD" for wrong_method.
};

/// Routes by method and path. A pattern is a path whose segments are literal or a
/// {name}, which matches one non-empty segment: "/v1/devices/{imei}/records". Segments
/// are compared after percent-decoding; the query is not part of the path. Patterns
/// are tried in the order they were added. A GET route also answers HEAD.
class router {
 public:
  /// Throws std::invalid_argument for a pattern that is not "/" followed by segments.
  void add(std::string method, std::string_view pattern, handler run, route_options options = {});
  void get(std::string_view pattern, answer_now answer);

  [[nodiscard]] route_match match(std::string_view method, std::string_view path) const;

  /// Each route's method and pattern, in the order they were added.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> listing() const;

  /// Words the server's own answers with `render` instead of plain text.
  void on_refusal(refusal_renderer render) { refusal_ = std::move(render); }
  /// The server's own answer: `render`'s, or `message` as plain text.
  [[nodiscard]] response refusal(unsigned status, std::string_view code,
                                 std::string_view message) const;

 private:
  struct route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  ///< "{name}" for a parameter.
    handler run;
    route_options options;
  };
  std::vector<route> routes_;
  refusal_renderer refusal_;
};

/// `text` with %XX escapes decoded, or false for a '%' not followed by two hex digits.
[[nodiscard]] bool percent_decode(std::string_view text, std::string& out);

}  // namespace tgw::infra::http
