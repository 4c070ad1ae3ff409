#include "infra/cli/listen_address.hpp"

#include <charconv>

namespace tgw::infra {

std::string listen_address_problem(const std::string& text) {
  if (text.empty()) return {};
  const std::string expected =
      "'" + text + "' is not host:port (e.g. 127.0.0.1:9127 or [::1]:9127)";
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return expected;
  const std::string host = text.substr(0, colon);
  if (host.find(':') != std::string::npos && !(host.front() == '[' && host.back() == ']'))
    return expected;
  unsigned port = 0;
  const char* begin = text.data() + colon + 1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc{} || ptr != end || port > 65535) return expected;
  return {};
}

CLI::Validator listen_address() {
  return {[](std::string& text) { return listen_address_problem(text); }, "HOST:PORT"};
}

}  // namespace tgw::infra
