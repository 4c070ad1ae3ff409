#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace tgw::infra {

/// Why `text` is no address to listen on (host:port, [v6]:port; port 0-65535), or empty
/// when it is one. An empty text is fine: the listener is off.
[[nodiscard]] std::string listen_address_problem(const std::string& text);

/// The same as a CLI11 check: a bad --metrics-addr is a usage error (exit 2) before
/// anything starts, not a failure of the HTTP server later.
[[nodiscard]] CLI::Validator listen_address();

}  // namespace tgw::infra
