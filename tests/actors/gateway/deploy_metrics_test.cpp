// The Grafana dashboard and the Prometheus rules of docs/deploy against what runs: a
// real `tgw serve` (with TLS on a port of its own, so that the TLS series exist), a
// device that stored a record, and a real `tgw sink postgres` (a consumer group, so
// that the lag series exist); every metric name their queries use is served by one of
// the two.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "tests/support/device_protocol.hpp"
#include "tests/support/postgres_server.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/tls_device.hpp"
#include "tests/support/tracker.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

/// The metric names a Prometheus text page holds: each sample line's name.
std::set<std::string> served_names(const std::string& page) {
  std::set<std::string> out;
  std::istringstream lines(page.substr(std::min(page.size(), page.find("\r\n\r\n"))));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '\r') continue;
    const auto end = line.find_first_of("{ ");
    if (end != std::string::npos && end > 0) out.insert(line.substr(0, end));
  }
  return out;
}

TEST(DeployAssets, EveryMetricTheDashboardAndTheRulesUseIsServed) {
  const std::string dir = ::testing::TempDir() + "/deploy-metrics";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const pem_files ca = make_ca(dir, "ca");
  const pem_files cert = make_signed(dir, "gateway", ca, 7);
  redis_server redis;
  postgres_server pg;
  const std::string redis_url = "redis://127.0.0.1:" + std::to_string(redis.port());
  const std::uint16_t gateway_metrics = free_port();
  const std::uint16_t sink_metrics = free_port();
  const std::uint16_t port = free_port();
  child_process gateway({TGW_BINARY,
                         "serve",
                         "--port",
                         std::to_string(port),
                         "--tls-port",
                         std::to_string(free_port()),
                         "--tls-cert",
                         cert.cert,
                         "--tls-key",
                         cert.key,
                         "--bind",
                         "127.0.0.1",
                         "--redis",
                         redis_url,
                         "--metrics-addr",
                         "127.0.0.1:" + std::to_string(gateway_metrics),
                         "--instance-id",
                         "gw-deploy",
                         "--telemetry-retention-interval-ms",
                         "200"},
                        dir + "/gateway.log");
  // Quoted for the shell, by append: GCC 12 at -O2 takes "'" + <a temporary string> for
  // a write past the one-byte literal (-Wstringop-overflow, a false positive).
  std::string dsn = "'";
  dsn.append(pg.dsn()).append("'");
  ASSERT_EQ(run_tgw("sink postgres --init --dsn " + dsn).exit_code, 0);
  child_process sink({TGW_BINARY, "sink", "postgres", "--dsn", pg.dsn(), "--redis", redis_url,
                      "--metrics-addr", "127.0.0.1:" + std::to_string(sink_metrics)},
                     dir + "/sink.log");
  // A record in the stream: the gateway reads the groups of a stream that holds one.
  tracker device_a(port, "356307042441013");
  ASSERT_TRUE(device_a.deliver(1'700'000'000'000, 20s));
  // The lag gauges exist once the gateway's retention pass has seen the sink's group.
  std::string gateway_page;
  std::string sink_page;
  ASSERT_TRUE(eventually(
      [&] {
        gateway_page = http_get(gateway_metrics, "/metrics");
        sink_page = http_get(sink_metrics, "/metrics");
        return gateway_page.find("teltonika_telemetry_consumer_lag_seconds{") !=
                   std::string::npos &&
               sink_page.find("teltonika_sink_lag_seconds{") != std::string::npos;
      },
      30s))
      << gateway_page << sink_page;
  std::set<std::string> served = served_names(gateway_page);
  served.merge(served_names(sink_page));

  const std::string source = TGW_SOURCE_DIR;
  const run_result used = run_command("python3 " + source + "/tests/docs/deploy_assets.py names " +
                                      source + "/docs/deploy/prometheus/tgw-rules.yml " + source +
                                      "/docs/deploy/grafana/tgw-dashboard.json");
  ASSERT_EQ(used.exit_code, 0) << used.out;
  std::set<std::string> names;
  std::istringstream lines(used.out);
  for (std::string name; std::getline(lines, name);) names.insert(name);
  // A parse that found nothing would pass below: it must find what is surely there.
  for (const char* known : {"teltonika_ready", "teltonika_ack_latency_seconds_bucket",
                            "teltonika_persist_failures_total", "teltonika_sink_lag_seconds",
                            "teltonika_telemetry_consumer_lag_seconds",
                            "teltonika_tls_handshakes_waiting", "teltonika_command_outcomes_total"})
    EXPECT_TRUE(names.contains(known)) << known << " not found in the queries:\n" << used.out;
  for (const std::string& name : names) {
    // Prometheus writes `up` itself, for every target it scrapes.
    if (name == "up") continue;
    EXPECT_TRUE(served.contains(name)) << name << " is used but served by neither";
  }
  gateway.signal(SIGTERM);
  sink.signal(SIGTERM);
  EXPECT_EQ(gateway.wait(), 0);
  EXPECT_EQ(sink.wait(), 0);
}

}  // namespace
}  // namespace tgw::test
