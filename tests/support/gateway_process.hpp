#pragma once

// A real `tgw serve` for end-to-end tests of the client subcommands: on the test's
// Redis (a single node, or the cluster of redis_backend), with its own instance id and
// device port, heartbeats and janitor passes frequent enough for a test.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/redis_backend.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {

struct gateway_process {
  std::string instance;
  std::uint16_t port = 0;
  std::unique_ptr<child_process> process;
};

/// Starts `tgw serve --instance-id instance` with `extra` flags (a flag given there
/// replaces the same flag above); its log goes to the test temp dir. The returned
/// gateway accepts devices (port 0 when it did not start).
inline gateway_process start_gateway(const redis_backend& backend, const std::string& instance,
                                     const std::vector<std::string>& extra = {}) {
  gateway_process g{instance, free_port(), nullptr};
  std::vector<std::string> argv = {TGW_BINARY,
                                   "serve",
                                   "--port",
                                   std::to_string(g.port),
                                   "--bind",
                                   "127.0.0.1",
                                   "--redis",
                                   backend.url(),
                                   "--metrics-addr",
                                   "",
                                   "--instance-id",
                                   instance,
                                   "--heartbeat-interval-ms",
                                   "200",
                                   "--janitor-interval-ms",
                                   "300"};
  // A flag in `extra` that is also above replaces it (CLI11 takes each once).
  for (std::size_t i = 0; i < extra.size(); ++i) {
    const auto at = std::find(argv.begin(), argv.end(), extra[i]);
    if (extra[i].starts_with("--") && at != argv.end() && at + 1 != argv.end() &&
        i + 1 < extra.size()) {
      *(at + 1) = extra[++i];
      continue;
    }
    argv.push_back(extra[i]);
  }
  g.process =
      std::make_unique<child_process>(argv, ::testing::TempDir() + "/gateway-" + instance + ".log");
  if (!eventually([&] { return device(g.port).connected(); }, std::chrono::seconds{20})) g.port = 0;
  return g;
}

}  // namespace tgw::test
