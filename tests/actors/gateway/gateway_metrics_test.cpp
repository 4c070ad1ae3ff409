// What `tgw serve` exposes on its metrics address (gateway_fixture.hpp): the counters
// of frames, errors and ACKs, each series once with its unit, /healthz and /readyz.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/actors/gateway/gateway_fixture.hpp"
#include "tests/support/raw_http_client.hpp"

namespace tgw::test::gateway_suite {
namespace {

TEST_F(Gateway, MetricsCountFramesByCodecAndErrorAndTimeTheAcks) {
  const std::uint16_t metrics_port = free_port();
  start(
      {"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port), "--max-frame-size", "2048"});
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(packet(2, 1'700'000'000'000));
  ASSERT_EQ(d.receive(4), ack(2));
  d.send(packet(1, 1'700'000'100'000, codecs::codec_id::codec8));
  ASSERT_EQ(d.receive(4), ack(1));
  bytes bad = packet(1, 1'700'000'200'000);
  bad.back() ^= 0x01;
  d.send(bad);
  EXPECT_FALSE(d.receive(4).has_value());
  device oversize(port);
  oversize.send(handshake("123456789012345"));
  ASSERT_EQ(oversize.receive(1), bytes{0x01});
  oversize.send({0, 0, 0, 0, 0, 0x10, 0, 0});
  ASSERT_TRUE(oversize.closed_by_server());

  const std::string id = "instance_id=\"gw-test\"";
  std::string text;
  ASSERT_TRUE(eventually([&] {
    text = scrape_metrics(metrics_port);
    return metric_value(
               text, "teltonika_frame_errors_total{" + id + ",error=\"length_too_large\"} ") == 1;
  })) << text;
  EXPECT_EQ(metric_value(text, "teltonika_frames_by_codec_total{" + id + ",codec=\"8E\"} "), 2)
      << text;
  EXPECT_EQ(metric_value(text, "teltonika_frames_by_codec_total{" + id + ",codec=\"8\"} "), 1);
  EXPECT_EQ(metric_value(text, "teltonika_frame_errors_total{" + id + ",error=\"bad_crc\"} "), 1);
  EXPECT_EQ(metric_value(text, "teltonika_records_persisted_total{" + id + "} "), 3);
  EXPECT_EQ(metric_value(text, "teltonika_ack_latency_seconds_count{" + id + "} "), 2);
  EXPECT_EQ(metric_value(text, "teltonika_ack_latency_seconds_bucket{" + id + ",le=\"+Inf\"} "), 2);
  EXPECT_GE(metric_value(text, "teltonika_writer_batch_size_count{" + id + "} "), 1);
  EXPECT_EQ(metric_value(text, "teltonika_handshakes_total{" + id + ",result=\"accepted\"} "), 2);
  // start() probes the port with one connection of its own.
  EXPECT_EQ(metric_value(text, "teltonika_connections_total{" + id + ",result=\"accepted\"} "), 3);
  EXPECT_EQ(metric_value(
                text, "teltonika_redis_errors_total{" + id + ",component=\"telemetry_writer\"} "),
            0);
}

/// How many sample lines of metric family `name` the exposition has.
int samples(const std::string& text, const std::string& name) {
  int n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with(name + "{") || line.starts_with(name + " ")) ++n;
  return n;
}

// Every series once, names with units, the build and the process described.
TEST_F(Gateway, MetricsNameEachThingOnceWithItsUnit) {
  const std::uint16_t metrics_port = free_port();
  start({"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port), "--capture-dir",
         ::testing::TempDir() + "/metrics-capture"});
  const std::string id = "instance_id=\"gw-test\"";
  // The device port accepts (the kernel's backlog) before the metrics endpoint serves.
  std::string text;
  ASSERT_TRUE(eventually([&] {
    text = scrape_metrics(metrics_port);
    return text.find("teltonika_build_info{") != std::string::npos;
  })) << text;
  // The registry's failures have one name, the one other systems read.
  EXPECT_EQ(samples(text, "teltonika_registry_failures_total"), 1) << text;
  EXPECT_EQ(text.find("component=\"registry\""), std::string::npos) << text;
  EXPECT_EQ(samples(text, "teltonika_capture_dropped_bytes_total"), 1) << text;
  EXPECT_EQ(samples(text, "teltonika_capture_dropped_total"), 0) << text;
  EXPECT_NE(text.find("teltonika_build_info{" + id + ",version=\""), std::string::npos) << text;
  EXPECT_GT(metric_value(text, "process_open_fds "), 0) << text;
  EXPECT_GT(metric_value(text, "process_resident_memory_bytes "), 1 << 20) << text;
  EXPECT_GE(metric_value(text, "process_cpu_seconds_total "), 0) << text;
  EXPECT_GT(metric_value(text, "process_start_time_seconds "), 1.7e9) << text;
  // No family is exposed twice.
  std::map<std::string, int> types;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("# TYPE ")) ++types[line.substr(7, line.find(' ', 7) - 7)];
  for (const auto& [name, n] : types) EXPECT_EQ(n, 1) << name;
}

// /healthz answers while the process serves; /readyz only while the port accepts,
// Redis takes writes and the heartbeat is fresh, and says why not.
TEST_F(Gateway, ReadyzFollowsRedisAndHealthzStaysUp) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  const std::uint16_t metrics_port = free_port();
  start({"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port), "--heartbeat-interval-ms",
         "200"});
  EXPECT_TRUE(eventually([&] {
    return http_get(metrics_port, "/readyz").starts_with("HTTP/1.1 200");
  })) << http_get(metrics_port, "/readyz");
  EXPECT_TRUE(http_get(metrics_port, "/healthz").starts_with("HTTP/1.1 200"));
  server().stop();
  std::string answer;
  EXPECT_TRUE(eventually([&] {
    answer = http_get(metrics_port, "/readyz");
    return answer.starts_with("HTTP/1.1 503");
  })) << answer;
  EXPECT_NE(answer.find("not ready: "), std::string::npos) << answer;
  EXPECT_TRUE(http_get(metrics_port, "/healthz").starts_with("HTTP/1.1 200"));
  server().start();
  EXPECT_TRUE(
      eventually([&] { return http_get(metrics_port, "/readyz").starts_with("HTTP/1.1 200"); },
                 std::chrono::seconds{20}));
}

// The endpoint's default budgets: ten clients that send half a request each hold ten
// connections, not the threads that answer, so a liveness probe is answered while
// they wait (civetweb's two threads left it unanswered until its 30 s timeout).
TEST_F(Gateway, HealthzIsAnsweredWhileTenHalfSentRequestsAreOpen) {
  const std::uint16_t metrics_port = free_port();
  start({"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port)});
  // The endpoint opens after the device port.
  ASSERT_TRUE(
      eventually([&] { return http_get(metrics_port, "/healthz").starts_with("HTTP/1.1 200"); }));
  std::vector<raw_client> slow;
  for (int i = 0; i < 10; ++i) {
    slow.emplace_back(metrics_port);
    ASSERT_TRUE(slow.back().send("GET /metrics HTTP/1.1\r\nHost: gw\r\nUser-Agent: "));
  }
  raw_client probe(metrics_port);
  ASSERT_TRUE(probe.send("GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n"));
  const std::string answer = probe.read_response();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(answer.ends_with("\r\n\r\nok\n")) << answer;
  for (const raw_client& c : slow) EXPECT_TRUE(c.open_now());
}

// --metrics-per-address-connections reaches the endpoint: a second connection from an
// address already holding its one is closed on accept and counted, while another
// address is served.
TEST_F(Gateway, TheMetricsEndpointHoldsEachAddressToItsConnectionCap) {
  const std::uint16_t metrics_port = free_port();
  start({"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port),
         "--metrics-per-address-connections", "1"});
  ASSERT_TRUE(
      eventually([&] { return http_get(metrics_port, "/healthz").starts_with("HTTP/1.1 200"); }));
  raw_client held(metrics_port, "127.0.0.7");
  ASSERT_TRUE(held.send("GET /metrics HTTP/1.1\r\n"));
  raw_client refused(metrics_port, "127.0.0.7");
  ASSERT_TRUE(refused.closed_by_server());
  EXPECT_TRUE(refused.received().empty()) << refused.received();
  EXPECT_TRUE(held.open_now());
  const std::string text = scrape_metrics(metrics_port);
  EXPECT_EQ(metric_value(text,
                         "teltonika_http_connections_total{instance_id=\"gw-test\","
                         "endpoint=\"metrics\",result=\"refused_address_limit\"} "),
            1)
      << text;
}

}  // namespace
}  // namespace tgw::test::gateway_suite
