#pragma once

#include <optional>
#include <string>

#include "infra/http/beast.hpp"
#include "infra/http/message.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/http/server_stats.hpp"

namespace tgw::infra::http {

/// A parser for one request, held to the head and body caps.
void hold_to_limits(request_parser& parser, const server_limits& limits);

/// The answer a request that cannot be read gets before its connection is closed.
struct refusal {
  unsigned status;  ///< 400, 413, 431
  close_reason reason;
};

/// What a failed read means: a refusal for what the client sent (too large, not
/// HTTP), nothing when the client left or the socket failed (closed quietly).
[[nodiscard]] std::optional<refusal> refusal_for(const error_code& ec);

/// A refusal for a head that parsed but cannot be served: a version other than
/// HTTP/1.0 and 1.1, or a target that is not a path ("*", "http://...").
[[nodiscard]] std::optional<refusal> refusal_for(const bhttp::request<bhttp::string_body>& head);

/// The request as handlers see it: the target split into path and query, header
/// names in lower case, the body moved out of `parsed`.
[[nodiscard]] request to_request(bhttp::request<bhttp::string_body>& parsed, std::string peer);

}  // namespace tgw::infra::http
