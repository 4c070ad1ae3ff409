#include "infra/http/request_reading.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace tgw::infra::http {
namespace {

std::string_view view(beast::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace

void hold_to_limits(request_parser& parser, const server_limits& limits) {
  parser.header_limit(limits.max_header_bytes);
  parser.body_limit(limits.max_body_bytes);
}

std::optional<refusal> refusal_for(const error_code& ec) {
  if (ec.category() != bhttp::make_error_code(bhttp::error::end_of_stream).category())
    return std::nullopt;  // a socket error: the client left, or the read was cancelled
  switch (static_cast<bhttp::error>(ec.value())) {
    case bhttp::error::end_of_stream:
    case bhttp::error::partial_message:
      return std::nullopt;
    // The buffer holds at most a head and a read's worth more, so it overflows only
    // for a head that would pass header_limit anyway.
    case bhttp::error::header_limit:
    case bhttp::error::buffer_overflow:
      return refusal{431, close_reason::header_too_large};
    case bhttp::error::body_limit:
      return refusal{413, close_reason::body_too_large};
    default:
      return refusal{400, close_reason::malformed};
  }
}

std::optional<refusal> refusal_for(const bhttp::request<bhttp::string_body>& head) {
  const unsigned version = head.version();
  const std::string_view target = view(head.target());
  if ((version != 10 && version != 11) || target.empty() || target.front() != '/')
    return refusal{400, close_reason::malformed};
  return std::nullopt;
}

request to_request(bhttp::request<bhttp::string_body>& parsed, std::string peer) {
  request r;
  r.method = std::string(view(parsed.method_string()));
  r.target = std::string(view(parsed.target()));
  const std::size_t question = r.target.find('?');
  r.path = r.target.substr(0, question);
  if (question != std::string::npos) r.query = r.target.substr(question + 1);
  for (const auto& field : parsed) {
    std::string name(view(field.name_string()));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    r.headers.emplace_back(std::move(name), std::string(view(field.value())));
  }
  r.body = std::move(parsed.body());
  r.peer = std::move(peer);
  return r;
}

}  // namespace tgw::infra::http
