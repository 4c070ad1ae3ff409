// TLS records no TLS library would send, against a real `tgw serve`: tampered records,
// and floods of KeyUpdates, empty records and warning alerts before any IMEI. The
// client seals its records itself (tests/support/raw_tls_client.hpp). The bounds the
// flood tests check, another device's ACK p99 under 50 ms and the gateway's RSS
// growing by less than 16 MiB, are the acceptance; everything else waits up
// to a deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/actors/gateway/device_port_fixture.hpp"
#include "tests/support/raw_tls_client.hpp"

namespace tgw::test::device_port {
namespace {

using sent = raw_tls13_client::sent;

// --- tampered records ---------------------------------------------------------------

struct tampering {
  std::string name;
  /// What the client sends after a stored packet (`previous`, as it went on the wire):
  /// the records of the next two packets, sealed in order, one of them tampered with.
  std::function<bytes(raw_tls13_client&, const bytes& previous)> wire;
  int alert;  ///< The fatal alert OpenSSL answers with.
  std::string reason;
};

bytes joined(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bytes next_record(raw_tls13_client& c, std::uint8_t type = tls_wire::application_data) {
  return c.seal(type, packet(1, 1'700'000'100'000));
}

std::vector<tampering> tamperings() {
  using namespace tls_wire;
  const std::string bad_mac = "decryption failed or bad record mac";
  return {
      {"flipped_byte",
       [](raw_tls13_client& c, const bytes&) {
         bytes next = next_record(c);
         next[next.size() - 20] ^= 0x01;  // inside the ciphertext
         return joined(next, next_record(c));
       },
       bad_record_mac, bad_mac},
      {"truncated",
       [](raw_tls13_client& c, const bytes&) {
         bytes next = next_record(c);
         next.pop_back();  // the tag's last byte, and the length says so
         const std::size_t length = next.size() - 5;
         next[3] = static_cast<std::uint8_t>(length >> 8);
         next[4] = static_cast<std::uint8_t>(length);
         return joined(next, next_record(c));
       },
       bad_record_mac, bad_mac},
      {"replayed",
       [](raw_tls13_client& c, const bytes& previous) { return joined(previous, next_record(c)); },
       bad_record_mac, bad_mac},
      {"reordered",
       [](raw_tls13_client& c, const bytes&) {
         const bytes next = next_record(c);
         return joined(next_record(c), next);
       },
       bad_record_mac, bad_mac},
      {"overlong",
       [](raw_tls13_client& c, const bytes&) {
         bytes next = next_record(c);
         // 2^14 + 256 + 1: one byte past the largest TLS 1.3 ciphertext.
         next[3] = 0x41;
         next[4] = 0x01;
         return joined(next, next_record(c));
       },
       record_overflow, "encrypted length too long"},
      {"unknown_outer_type",
       [](raw_tls13_client& c, const bytes&) {
         bytes next = next_record(c);
         next[0] = 0x20;
         return joined(next, next_record(c));
       },
       unexpected_message, "bad record type"},
      {"unknown_inner_type",
       [](raw_tls13_client& c, const bytes&) {
         const bytes next = next_record(c, 0x20);
         return joined(next, next_record(c));
       },
       unexpected_message, "bad record type"},
  };
}

void PrintTo(const tampering& t, std::ostream* out) {
  *out << t.name;
}

class DevicePortTampering : public DevicePort, public ::testing::WithParamInterface<tampering> {};

TEST_P(DevicePortTampering, EndsTheSessionWithOpenSslsFatalAlertAndNothingAfterIsAcked) {
  start(tls_flags());
  raw_tls13_client c(port);
  ASSERT_TRUE(c.established()) << c.error();
  ASSERT_EQ(c.send_raw(c.seal(tls_wire::application_data, handshake_packet(imei_a))), sent::all);
  ASSERT_EQ(c.receive(1), bytes{0x01});
  const bytes stored = c.seal(tls_wire::application_data, packet(2, 1'700'000'000'000));
  ASSERT_EQ(c.send_raw(stored), sent::all);
  ASSERT_EQ(c.receive(4), ack(2));

  const tampering& t = GetParam();
  ASSERT_EQ(c.send_raw(t.wire(c, stored)), sent::all);
  EXPECT_EQ(c.receive(4), std::nullopt);
  const auto alert = c.alert_at_end();
  ASSERT_TRUE(alert.has_value()) << "the session ended without an alert";
  EXPECT_EQ(alert->level, 2);
  EXPECT_EQ(alert->description, t.alert);
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("TLS read failed: " + t.reason) != std::string::npos;
  })) << read_file(log);
  // Only the packet before the tampered record is stored.
  EXPECT_EQ(db.command({"XLEN", "telemetry:records"}).integer, 2);
  const auto events = journal(imei_a);
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const auto& e) { return e.at("type") == "records_accepted"; }),
            1);
}

INSTANTIATE_TEST_SUITE_P(Records, DevicePortTampering, ::testing::ValuesIn(tamperings()),
                         [](const auto& p) { return p.param.name; });

// --- floods before any IMEI ------------------------------------------------------------

// The gateway's resident memory, from /proc.
std::size_t rss_kib(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("VmRSS:")) return std::stoul(line.substr(6));
  return 0;
}

struct flood_kind {
  std::string name;
  /// The next batch of a flood's records on `c`, sealed in order.
  std::function<bytes(raw_tls13_client&)> records;
  std::string reason;  ///< What the gateway's log says when it ends such a connection.
};

void PrintTo(const flood_kind& k, std::ostream* out) {
  *out << k.name;
}

bytes sealed_batch(raw_tls13_client& c, int count, std::uint8_t type, const bytes& content,
                   bool key_update = false) {
  bytes out;
  for (int i = 0; i < count; ++i) {
    const bytes record = c.seal(type, content);
    out.insert(out.end(), record.begin(), record.end());
    if (key_update) c.key_updated();
  }
  return out;
}

std::vector<flood_kind> flood_kinds() {
  using namespace tls_wire;
  return {
      {"many_key_updates_in_a_record",
       [](raw_tls13_client& c) {
         const bytes record = c.seal(handshake, raw_tls13_client::key_updates(200, true));
         for (int i = 0; i < 200; ++i) c.key_updated();
         return record;
       },
       "not on record boundary"},
      {"key_updates_requested_never_read",
       [](raw_tls13_client& c) {
         return sealed_batch(c, 64, handshake, raw_tls13_client::key_updates(1, true), true);
       },
       "TLS KeyUpdates without application data"},
      {"empty_records",
       [](raw_tls13_client& c) { return sealed_batch(c, 64, application_data, {}); },
       "record too small"},
      {"warning_alerts",
       [](raw_tls13_client& c) {
         return sealed_batch(c, 64, alert, {1, user_canceled});
       },
       "too many warn alerts"},
  };
}

// What the flooding side saw, connection by connection.
struct flood_log {
  std::atomic<int> connections{0};
  std::atomic<int> ended_by_gateway{0};  ///< Closed or reset while flooding.
  std::atomic<int> throttled{0};         ///< The gateway stopped reading.
  std::atomic<int> no_handshake{0};
};

// Connections one after the other until `stop`, each flooding its records as fast as
// the socket takes them and never reading, until the gateway refuses them.
void flood(std::uint16_t port, const flood_kind& kind, const std::atomic<bool>& stop,
           flood_log& out) {
  while (!stop) {
    raw_tls13_client c(port);
    if (!c.established()) {
      ++out.no_handshake;
      std::this_thread::sleep_for(20ms);
      continue;
    }
    ++out.connections;
    c.set_send_timeout(300ms);
    sent outcome = sent::all;
    while (!stop && outcome == sent::all) outcome = c.send_raw(kind.records(c));
    if (outcome == sent::closed) ++out.ended_by_gateway;
    if (outcome == sent::blocked) ++out.throttled;
    std::this_thread::sleep_for(20ms);
  }
}

class DevicePortFloods : public DevicePort, public ::testing::WithParamInterface<flood_kind> {};

TEST_P(DevicePortFloods, EndOrThrottleTheFloodWhileAnotherDeviceIsAckedInTime) {
  auto flags = tls_flags();
  // One io thread: the flood and the other device share it, the hardest case.
  flags.insert(flags.end(), {"--io-threads", "1"});
  start(flags);
  tls_device other(port, trusting(ca.cert));
  ASSERT_TRUE(other.established()) << other.error();
  other.send(handshake_packet(imei_a));
  ASSERT_EQ(other.receive(1), bytes{0x01});
  std::uint64_t t = 1'700'000'000'000;
  auto acked_in = [&] {
    const auto sent_at = std::chrono::steady_clock::now();
    other.send(packet(1, t += 1000));
    EXPECT_EQ(other.receive(4), ack(1));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent_at)
        .count();
  };
  for (int i = 0; i < 20; ++i) acked_in();  // warm: the writers, Redis, the allocator
  const std::size_t rss_before = rss_kib(gateways.back().pid());

  std::atomic<bool> stop{false};
  flood_log flooded;
  std::thread flooder([&] { flood(port, GetParam(), stop, flooded); });
  std::vector<double> latencies;
  std::size_t rss_peak = rss_before;
  const auto end = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < end) {
    latencies.push_back(acked_in());
    rss_peak = std::max(rss_peak, rss_kib(gateways.back().pid()));
    std::this_thread::sleep_for(10ms);
  }
  stop = true;
  flooder.join();
  rss_peak = std::max(rss_peak, rss_kib(gateways.back().pid()));

  std::sort(latencies.begin(), latencies.end());
  const double p99 = latencies[(latencies.size() * 99 + 99) / 100 - 1];
  EXPECT_LT(p99, 50.0) << latencies.size() << " ACKs, the slowest " << latencies.back() << " ms";
  EXPECT_LT(rss_peak - rss_before, std::size_t{16} * 1024)
      << "RSS " << rss_before << " -> " << rss_peak << " KiB";
  EXPECT_GT(flooded.connections.load(), 0);
  EXPECT_EQ(flooded.no_handshake.load(), 0);
  // Every connection the flood finished with was ended (or stopped) by the gateway;
  // the last one was cut short by the test.
  EXPECT_GE(flooded.ended_by_gateway + flooded.throttled, flooded.connections - 1);
  EXPECT_GT(flooded.ended_by_gateway.load(), 0);
  EXPECT_NE(read_file(log).find(GetParam().reason), std::string::npos) << read_file(log);
  EXPECT_TRUE(gateways.back().running());
  std::cout << GetParam().name << ": " << flooded.connections << " connections ("
            << flooded.ended_by_gateway << " ended, " << flooded.throttled
            << " throttled), other device's ACK p50 " << latencies[latencies.size() / 2]
            << " ms, p99 " << p99 << " ms over " << latencies.size() << ", RSS " << rss_before
            << " -> " << rss_peak << " KiB\n";
}

INSTANTIATE_TEST_SUITE_P(BeforeAnyImei, DevicePortFloods, ::testing::ValuesIn(flood_kinds()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace tgw::test::device_port
