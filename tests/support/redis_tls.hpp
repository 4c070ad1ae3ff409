#pragma once

#include <stdlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "infra/redis/redis_url.hpp"
#include "tests/support/tls_device.hpp"

namespace tgw::test {

/// Whether this test binary runs its suites over TLS (compiled with TGW_TEST_OVER_TLS):
/// then the servers, sentinels and clusters it starts listen on TLS ports only, and
/// redis_backend hands every tgw process the CA through TGW_REDIS_TLS_CA.
#ifdef TGW_TEST_OVER_TLS
inline constexpr bool over_tls = true;
#else
inline constexpr bool over_tls = false;
#endif

/// A throw-away CA for TLS Redis servers in tests, and what it signed: a server
/// certificate for 127.0.0.1 and localhost, and a client certificate. Made once per test
/// binary in a temporary directory.
struct redis_tls_files {
  std::string dir;
  pem_files ca;
  pem_files server;
  pem_files client_pem;

  static const redis_tls_files& shared();

  /// redis-server arguments that make the server on `port` speak TLS only there
  /// (plain port 0), with TLS replication and cluster bus; `auth_clients`: it asks for a
  /// client certificate signed by the CA.
  [[nodiscard]] std::vector<std::string> server_args(std::uint16_t port,
                                                     bool auth_clients = false) const;
  /// The same as lines of a configuration file (for sentinels).
  [[nodiscard]] std::string server_config(std::uint16_t port) const;
  /// How tgw verifies these servers: the CA, and the client certificate when asked.
  [[nodiscard]] infra::redis::tls_options client(bool with_certificate = false) const;
  /// The same as tgw flags: " --redis-tls-ca FILE [--redis-tls-cert F --redis-tls-key F]".
  [[nodiscard]] std::string flags(bool with_certificate = false) const;
};

#ifdef TGW_TEST_OVER_TLS
/// Every tgw process a TLS binary starts verifies its servers with the shared CA.
inline const bool children_trust_the_test_ca = [] {
  ::setenv("TGW_REDIS_TLS_CA", redis_tls_files::shared().ca.cert.c_str(), 1);
  return true;
}();
#endif

}  // namespace tgw::test
