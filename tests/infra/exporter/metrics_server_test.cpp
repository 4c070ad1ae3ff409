// The metrics endpoint as probes and scrapers see it, on a real socket: /healthz keeps
// answering while slow clients hang, /metrics is Prometheus text with the endpoint's
// own refusals in it, /readyz says why it is 503, and a taken address says so.
#include "infra/exporter/metrics_server.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "infra/http/server.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/raw_http_client.hpp"

namespace tgw::infra::exporter {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::raw_client;

std::vector<prometheus::MetricFamily> one_counter() {
  prometheus::MetricFamily f{
      "teltonika_test_events_total", "Events of the test", prometheus::MetricType::Counter, {}};
  prometheus::ClientMetric m;
  m.label.push_back({"instance_id", "t"});
  m.counter.value = 7;
  f.metric.push_back(std::move(m));
  return {f};
}

std::string get(std::uint16_t port, const std::string& path, const char* from = "127.0.0.1") {
  raw_client c(port, from);
  c.send("GET " + path + " HTTP/1.1\r\nHost: t\r\n\r\n");
  return c.read_response();
}

std::string body_of(const std::string& answer) {
  const auto end = answer.find("\r\n\r\n");
  return end == std::string::npos ? "" : answer.substr(end + 4);
}

// Slow clients stay for the whole test unless it says otherwise.
http::server_limits patient() {
  http::server_limits l;
  l.header_timeout = 60s;
  return l;
}

TEST(MetricsServer, AnswersHealthzWhileTenHalfSentRequestsAreOpen) {
  metrics_server s("127.0.0.1:0", one_counter, {}, patient());
  std::vector<raw_client> slow;
  for (int i = 0; i < 10; ++i) {
    slow.emplace_back(s.port());
    ASSERT_TRUE(slow.back().send("GET /metrics HTTP/1.1\r\nHost: t\r\n"));
  }
  const std::string answer = get(s.port(), "/healthz");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_EQ(body_of(answer), "ok\n");
  // Answered while every slow client still held its connection, not once they were gone.
  for (const raw_client& c : slow) EXPECT_TRUE(c.open_now());
}

TEST(MetricsServer, ServesPrometheusTextWithTheEndpointsOwnRefusals) {
  http::server_limits limits = patient();
  limits.max_connections_per_address = 1;
  metrics_server s("127.0.0.1:0", one_counter, {}, limits, {{"instance_id", "t"}});
  raw_client held(s.port(), "127.0.0.5");
  ASSERT_TRUE(held.send("GET /metrics HTTP/1.1\r\n"));
  raw_client refused(s.port(), "127.0.0.5");
  ASSERT_TRUE(refused.closed_by_server());

  const std::string answer = get(s.port(), "/metrics");
  ASSERT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  const std::string text = body_of(answer);
  EXPECT_EQ(test::metric_value(text, "teltonika_test_events_total{instance_id=\"t\"} "), 7);
  EXPECT_EQ(test::metric_value(text,
                               "teltonika_http_connections_total{instance_id=\"t\","
                               "endpoint=\"metrics\",result=\"refused_address_limit\"} "),
            1);
  EXPECT_EQ(test::metric_value(text,
                               "teltonika_http_connections{instance_id=\"t\","
                               "endpoint=\"metrics\"} "),
            2);
  EXPECT_EQ(test::metric_value(text,
                               "teltonika_http_closed_total{instance_id=\"t\","
                               "endpoint=\"metrics\",reason=\"header_timeout\"} "),
            0);

  // Prometheus's own parser and linter take it whole (promtool comes with scripts/setup).
  const std::string file = testing::TempDir() + "/scrape.txt";
  std::ofstream(file) << text;
  const int status = std::system(("promtool check metrics < '" + file + "' 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << text;
}

TEST(MetricsServer, CountsAClientClosedAtTheHeaderDeadline) {
  http::server_limits limits;
  limits.header_timeout = 200ms;
  metrics_server s("127.0.0.1:0", one_counter, {}, limits);
  raw_client silent(s.port());
  ASSERT_TRUE(silent.closed_by_server());
  const std::string text = body_of(get(s.port(), "/metrics"));
  EXPECT_EQ(
      test::metric_value(
          text, "teltonika_http_closed_total{endpoint=\"metrics\",reason=\"header_timeout\"} "),
      1)
      << text;
}

TEST(MetricsServer, ReadyzIs503WithTheReasonAndHealthzStays200) {
  std::mutex mutex;
  std::string why;
  metrics_server s("127.0.0.1:0", one_counter, [&] {
    const std::lock_guard lock(mutex);
    return why;
  });
  std::string answer = get(s.port(), "/readyz");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_EQ(body_of(answer), "ready\n");
  {
    const std::lock_guard lock(mutex);
    why = "every persist attempt failed for 3 s (connection: Connection refused)";
  }
  answer = get(s.port(), "/readyz");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << answer;
  EXPECT_NE(answer.find("Content-Type: text/plain\r\n"), std::string::npos) << answer;
  EXPECT_EQ(body_of(answer),
            "not ready: every persist attempt failed for 3 s (connection: Connection refused)\n");
  answer = get(s.port(), "/healthz");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
}

TEST(MetricsServer, ATakenAddressNamesItselfAndTheFlag) {
  metrics_server first("127.0.0.1:0", one_counter);
  const std::string address = "127.0.0.1:" + std::to_string(first.port());
  try {
    metrics_server second(address, one_counter);
    FAIL() << "a second endpoint listened on " << address;
  } catch (const std::exception& e) {
    EXPECT_EQ(cannot_serve_metrics(e), "cannot serve metrics: " + address +
                                           " is in use by another listener; choose another "
                                           "address with --metrics-addr ('' for none)");
  }
}

}  // namespace
}  // namespace tgw::infra::exporter
