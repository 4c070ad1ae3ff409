#pragma once

#include <functional>
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
  void add(std::string method, std::string_view pattern, handler run);
  void get(std::string_view pattern, answer_now answer);

  [[nodiscard]] route_match match(std::string_view method, std::string_view path) const;

 private:
  struct route {
    std::string method;
    std::vector<std::string> segments;  ///< "{name}" for a parameter.
    handler run;
  };
  std::vector<route> routes_;
};

/// `text` with %XX escapes decoded, or false for a '%' not followed by two hex digits.
[[nodiscard]] bool percent_decode(std::string_view text, std::string& out);

}  // namespace tgw::infra::http
