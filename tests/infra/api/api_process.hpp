#pragma once

// A real `tgw api` for end-to-end tests: on the test's Redis (a single node, or the
// cluster of redis_backend), on a free loopback port, with a tokens file of its own.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_backend.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {

struct api_process {
  std::uint16_t port = 0;
  std::unique_ptr<child_process> process;
};

/// Starts `tgw api --listen 127.0.0.1:PORT --redis URL` with `extra` flags; port 0 when
/// it was not ready (/readyz: Redis, the event streams, the outcome watcher; over HTTPS
/// with --tls-cert) within 20 s.
inline api_process start_api(const std::string& redis_url, const std::string& name,
                             const std::vector<std::string>& extra) {
  api_process a{free_port(), nullptr};
  std::vector<std::string> argv = {
      TGW_BINARY, "api", "--listen", "127.0.0.1:" + std::to_string(a.port), "--redis", redis_url};
  argv.insert(argv.end(), extra.begin(), extra.end());
  a.process = std::make_unique<child_process>(argv, ::testing::TempDir() + "/api-" + name + ".log");
  // Over TLS, plain HTTP gets no answer: curl probes it (any certificate will do here).
  const bool tls = std::find(extra.begin(), extra.end(), "--tls-cert") != extra.end();
  const auto healthy = [&] {
    if (tls)
      return run_command("curl -sfk https://127.0.0.1:" + std::to_string(a.port) + "/readyz")
                 .exit_code == 0;
    return http_get(a.port, "/readyz").find(" 200 ") != std::string::npos;
  };
  if (!eventually(healthy, std::chrono::seconds{20})) a.port = 0;
  return a;
}

inline api_process start_api(const redis_backend& backend, const std::string& name,
                             const std::vector<std::string>& extra) {
  return start_api(backend.url(), name, extra);
}

/// `tgw api token add NAME --scopes SCOPES --tokens FILE`: the token it printed.
inline std::string add_token(const std::string& file, const std::string& name,
                             const std::string& scopes) {
  const auto r = run_command(std::string(TGW_BINARY) + " api token add " + name + " --scopes " +
                             scopes + " --tokens " + file);
  // stdout has the token alone, stderr a line about it; both come here.
  const auto at = r.out.find("tgw_");
  if (r.exit_code != 0 || at == std::string::npos) return {};
  return r.out.substr(at, r.out.find('\n', at) - at);
}

}  // namespace tgw::test
