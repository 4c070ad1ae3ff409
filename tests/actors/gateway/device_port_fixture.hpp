#pragma once

// What the device port's tests share: a real `tgw serve` against a real redis-server,
// its certificates, and the frames and PROXY headers its devices send.
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"
#include "tests/support/tls_device.hpp"

namespace tgw::test::device_port {

using namespace std::chrono_literals;

inline constexpr const char* imei_a = "356307042441013";
inline constexpr const char* imei_b = "356307042441021";
inline constexpr const char* imei_c = "356307042441039";

inline bytes packet(int records, std::uint64_t t0) {
  std::vector<codecs::avl_record_data> rs;
  for (int i = 0; i < records; ++i) {
    codecs::avl_record_data r;
    r.timestamp_ms = t0 + static_cast<std::uint64_t>(i) * 1000;
    r.priority = 1;
    r.satellites = 9;
    r.io = {{239, 1, 1, {}}};
    rs.push_back(r);
  }
  bytes out;
  EXPECT_EQ(codecs::encode_avl_frame(codecs::codec_id::codec8e, rs, out), codecs::errc::ok);
  return out;
}

inline bytes ack(std::uint32_t n) {
  return {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
          static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string as_text(const bytes& b) {
  return {b.begin(), b.end()};
}

inline bytes text_bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

/// A PROXY v2 header for an IPv4 TCP connection from a.b.c.d:port.
inline std::string proxy_v2(std::array<std::uint8_t, 4> source, std::uint16_t port) {
  bytes h = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51,
             0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0x00, 0x0C};
  h.insert(h.end(), source.begin(), source.end());
  h.insert(h.end(), {10, 0, 0, 5});
  h.insert(h.end(),
           {static_cast<std::uint8_t>(port >> 8), static_cast<std::uint8_t>(port), 0x13, 0xA3});
  return as_text(h);
}

/// A raw device whose first bytes are `preamble` (a PROXY header).
inline std::unique_ptr<device> device_behind(std::uint16_t port, const std::string& preamble) {
  auto d = std::make_unique<device>(port);
  d->send(bytes(preamble.begin(), preamble.end()));
  return d;
}

inline tls_client_options trusting(const std::string& ca, pem_files certificate = {},
                                   std::string proxy_header = {}) {
  tls_client_options o;
  o.trusted_ca = ca;
  o.certificate = std::move(certificate);
  o.proxy_header = std::move(proxy_header);
  return o;
}

class DevicePort : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = ::testing::TempDir() + "/device-port-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    ca = make_ca(dir, "test-ca");
    server_cert = make_signed(dir, "gateway-1", ca, 11);
  }

  /// Starts a gateway; `port` is the device port. Returns once it accepts.
  void start(std::vector<std::string> extra, const std::string& instance = "gw-port-test") {
    port = free_port();
    metrics_port = free_port();
    std::vector<std::string> argv = {
        TGW_BINARY,       "serve",
        "--port",         std::to_string(port),
        "--bind",         "127.0.0.1",
        "--redis",        "redis://127.0.0.1:" + std::to_string(redis.port()),
        "--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port),
        "--instance-id",  instance,
        "--log-level",    "debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    log = dir + "/" + instance + ".log";
    gateways.emplace_back(argv, log);
    ASSERT_TRUE(eventually([&] {
      return http_get(metrics_port, "/readyz").starts_with("HTTP/1.1 200");
    })) << read_file(log);
  }

  std::vector<std::string> tls_flags() const {
    return {"--tls-cert", server_cert.cert, "--tls-key", server_cert.key};
  }

  double metric(const std::string& series) const {
    return metric_value(http_get(metrics_port, "/metrics"), series);
  }

  /// The fields of each journal event of `imei`, oldest first.
  std::vector<std::map<std::string, std::string>> journal(const std::string& imei) {
    std::vector<std::map<std::string, std::string>> events;
    for (const auto& e : db.command({"XRANGE", "journal:" + imei, "-", "+"}).elements) {
      std::map<std::string, std::string> f;
      const auto& kv = e.elements.at(1).elements;
      for (std::size_t i = 0; i + 1 < kv.size(); i += 2) f[kv[i].text] = kv[i + 1].text;
      events.push_back(std::move(f));
    }
    return events;
  }

  std::string dir;
  pem_files ca;
  pem_files server_cert;
  redis_server redis;
  infra::redis::connection db = redis.connect();
  std::uint16_t port = 0;
  std::uint16_t metrics_port = 0;
  std::string log;
  std::vector<child_process> gateways;
};

}  // namespace tgw::test::device_port
