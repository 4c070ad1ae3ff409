#pragma once

// What the gateway tests share: a real `tgw serve` process against a real redis-server
// (in actors_test) or a real 3+3 Redis Cluster (in actors_cluster_test, see
// redis_backend), driven by raw sockets that speak the device side of the protocol,
// and the frames its devices send. Waits poll up to a deadline; nothing here asserts
// on how long anything took.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "codecs/imei.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_backend.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test::gateway_suite {

using namespace std::chrono_literals;

inline codecs::imei make_imei(const char* digits) {
  codecs::imei id;
  EXPECT_EQ(codecs::imei::parse(digits, id), codecs::errc::ok);
  return id;
}

inline bytes handshake(const char* digits) {
  bytes out;
  codecs::encode_imei_packet(make_imei(digits), out);
  return out;
}

inline std::vector<codecs::avl_record_data> sample_records(int n, std::uint64_t t0) {
  std::vector<codecs::avl_record_data> records;
  for (int i = 0; i < n; ++i) {
    codecs::avl_record_data r;
    r.timestamp_ms = t0 + static_cast<std::uint64_t>(i) * 1000;
    r.priority = 1;
    r.longitude = 252616688 + i;
    r.latitude = 546992512 - i;
    r.altitude = 105;
    r.angle = 90;
    r.satellites = 12;
    r.speed = static_cast<std::uint16_t>(40 + i);
    r.event_io_id = 239;
    r.io = {{239, 1, 1, {}}, {66, 2, 12345, {}}, {16, 4, 987654, {}}};
    records.push_back(r);
  }
  return records;
}

inline bytes packet(int n, std::uint64_t t0, codecs::codec_id codec = codecs::codec_id::codec8e) {
  bytes out;
  const auto records = sample_records(n, t0);
  EXPECT_EQ(codecs::encode_avl_frame(codec, records, out), codecs::errc::ok);
  return out;
}

inline bytes ack(std::uint32_t n) {
  return {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
          static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
}

inline std::string scrape_metrics(std::uint16_t port) {
  return http_get(port, "/metrics");
}

class Gateway : public ::testing::Test {
 protected:
  explicit Gateway(bool durable = false) : backend(durable) {}

  void start(std::vector<std::string> extra = {}) {
    port = free_port();
    std::vector<std::string> argv = {
        TGW_BINARY,       "serve",     "--port",        std::to_string(port),
        "--bind",         "127.0.0.1", "--redis",       backend.url(),
        "--metrics-addr", "",          "--instance-id", "gw-test",
        "--log-level",    "debug"};
    // A flag given in `extra` replaces the default above (CLI11 takes each once).
    for (std::size_t i = 0; i + 1 < extra.size(); ++i) {
      const auto at = std::find(argv.begin(), argv.end(), extra[i]);
      if (extra[i].starts_with("--") && at != argv.end() && at + 1 != argv.end()) {
        *(at + 1) = extra[i + 1];
        extra.erase(extra.begin() + static_cast<std::ptrdiff_t>(i),
                    extra.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        --i;
      }
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    gateway.emplace(argv, ::testing::TempDir() + "/gateway.log");
    ASSERT_TRUE(eventually([&] { return device(port).connected(); })) << "gateway did not start";
  }

  /// Records in the telemetry stream (in every shard's, on a cluster).
  std::int64_t stream_length() {
    std::int64_t n = 0;
    for (const auto& stream : backend.in_every_shard("telemetry:records"))
      n += redis.command({"XLEN", stream}).integer;
    return n;
  }
  /// The telemetry entries of `imei`, oldest first.
  infra::redis::value telemetry_of(const std::string& imei) {
    return redis.command({"XRANGE", backend.prefix(imei) + "telemetry:records", "-", "+"});
  }
  std::string journal(const std::string& imei) { return backend.prefix(imei) + "journal:" + imei; }
  std::string device_key(const std::string& imei) {
    return backend.prefix(imei) + "device:" + imei;
  }
  std::vector<std::string> journal_types(const std::string& imei) {
    std::vector<std::string> types;
    for (const auto& e : redis.command({"XRANGE", journal(imei), "-", "+"}).elements)
      types.push_back(e.elements.at(1).elements.at(1).text);
    return types;
  }
  /// The single node, for outage tests (which a cluster runs as failovers instead).
  redis_server& server() { return *backend.server(); }

  redis_backend backend;
  infra::redis::connection redis = backend.connect();
  std::uint16_t port = 0;
  std::optional<child_process> gateway;
};

inline constexpr const char* imei_a = "356307042441013";

}  // namespace tgw::test::gateway_suite
