#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "infra/api/api_service.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/redis/connection.hpp"
#include "infra/telemetry/io_dictionary.hpp"

namespace tgw::infra::api {

/// The API's connection budget: more than the metrics endpoint's, as a balancer in
/// front of several instances brings many clients' requests from one address.
[[nodiscard]] inline http::server_limits default_api_limits() {
  http::server_limits l;
  l.max_connections = 1024;
  l.max_connections_per_address = 256;
  return l;
}

/// Everything `tgw api` (and `tgw serve --api-addr`) is told.
struct api_server_settings {
  std::string listen = "127.0.0.1:8080";
  api_settings api;
  std::string tokens_file;  ///< Empty only with no_auth.
  bool no_auth = false;
  double rate_per_token = 50;
  double rate_burst = 100;
  std::size_t max_event_clients = 256;
  std::size_t io_threads = 1;
  http::server_limits limits = default_api_limits();
  /// TLS on the listener: both set, or neither.
  std::string tls_cert;
  std::string tls_key;
};

/// Why these settings cannot start, or empty: --no-auth away from loopback, no tokens
/// file without --no-auth, one of --tls-cert/--tls-key without the other.
[[nodiscard]] std::string settings_problem(const api_server_settings& s);

/// The application API, serving: its HTTP server (on io threads of its own), the
/// workers with their Redis connections, the watcher of command outcomes and the event
/// hub. Stateless: every instance reads the same Redis, so several run behind a
/// balancer.
class api_server {
 public:
  /// Reads the tokens file and the TLS files, and listens. nullptr with `error` (one
  /// line: the cause and the fix) when one cannot be read or the address cannot be
  /// listened on. `names` names IO elements for names=true and must outlive the server.
  static std::unique_ptr<api_server> start(const api_server_settings& settings,
                                           const redis::connection::options& redis,
                                           const telemetry::io_dictionary* names,
                                           std::string& error);
  ~api_server();
  api_server(const api_server&) = delete;
  api_server& operator=(const api_server&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept;
  /// SIGHUP: the tokens file and the TLS files again. What changed, or why the old
  /// ones stay, in `report` (one line each); false when something could not be read.
  bool reload(std::string& report);

 private:
  api_server() = default;
  struct parts_t;
  std::unique_ptr<parts_t> parts_;
};

}  // namespace tgw::infra::api
