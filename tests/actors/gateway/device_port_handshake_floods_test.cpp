// Handshake floods against the TLS port behind a balancer: connections that send their
// PROXY header and nothing more, and ClientHellos dripped a byte at a time. A device
// that means to talk must complete its handshake and get its ACK in under 1 s while
// they go on (the bound, the one timing this file checks).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/actors/gateway/device_port_fixture.hpp"
#include "tests/support/raw_tls_client.hpp"

namespace tgw::test::device_port {
namespace {

std::string header_from(const std::string& source, int port) {
  return "PROXY TCP4 " + source + " 10.0.0.5 " + std::to_string(port) + " 5027\r\n";
}

class DevicePortHandshakeFloods : public DevicePort {
 protected:
  /// A device behind the balancer from an address of its own: from its TCP connect to
  /// the ACK of its first packet, in milliseconds.
  double legitimate_device_ms() {
    const auto t0 = std::chrono::steady_clock::now();
    tls_device d(port, trusting(ca.cert, {}, header_from("203.0.113.50", 45000)));
    EXPECT_TRUE(d.established()) << d.error();
    d.send(handshake_packet(imei_a));
    EXPECT_EQ(d.receive(1), bytes{0x01});
    d.send(packet(1, 1'700'000'000'000));
    EXPECT_EQ(d.receive(4), ack(1));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  const std::string running = "teltonika_tls_handshakes_running{instance_id=\"gw-port-test\"} ";
  const std::string in_progress = "teltonika_handshakes_in_progress{instance_id=\"gw-port-test\"} ";
};

// 768 connections from 3 addresses, each only a PROXY header: with the defaults, each
// address holds at most --per-address-handshakes (32) of them, none holds a slot of
// --tls-handshakes, and all are closed at --first-byte-timeout-ms.
TEST_F(DevicePortHandshakeFloods, IdleConnectionsFromThreeAddressesLeaveTheHandshakesFree) {
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--proxy-protocol", "v1"});
  start(flags);
  std::vector<std::unique_ptr<device>> idle;
  for (int i = 0; i < 768; ++i) {
    idle.push_back(std::make_unique<device>(port));
    ASSERT_TRUE(idle.back()->connected()) << i;
    idle.back()->send(
        text_bytes(header_from("198.51.100." + std::to_string(1 + i % 3), 40000 + i)));
  }
  ASSERT_TRUE(eventually([&] {
    return metric(
               "teltonika_connections_total{instance_id=\"gw-port-test\",result=\"accepted\"} ") ==
               768 &&
           metric(in_progress) == 3 * 32;
  })) << metric(in_progress);
  EXPECT_EQ(metric(running), 0);

  const double ms = legitimate_device_ms();
  EXPECT_LT(ms, 1000.0);
  std::cout << "768 idle connections from 3 addresses: handshake and ACK in " << ms << " ms\n";
  // The idle ones go at their first-byte deadline, long before the handshake's.
  EXPECT_TRUE(eventually([&] { return metric(in_progress) == 0; }, 8s)) << metric(in_progress);
  EXPECT_NE(read_file(log).find("first-byte timeout (the device sent nothing)"), std::string::npos);
}

// 300 ClientHellos dripped a byte at a time, from 300 addresses (so that no per-address
// limit applies): until a ClientHello is whole it stays in the kernel and holds no
// slot of the handshake gate, and the gateway is not woken for every byte.
TEST_F(DevicePortHandshakeFloods, ClientHellosDrippedAByteAtATimeLeaveTheHandshakesFree) {
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--proxy-protocol", "v1"});
  start(flags);
  const bytes hello = client_hello_bytes();
  std::vector<std::unique_ptr<device>> drippers;
  for (int i = 0; i < 300; ++i) {
    drippers.push_back(std::make_unique<device>(port));
    ASSERT_TRUE(drippers.back()->connected()) << i;
    const std::string source =
        "198.18." + std::to_string(1 + i / 250) + "." + std::to_string(1 + i % 250);
    drippers.back()->send(text_bytes(header_from(source, 40000 + i)));
  }
  // One byte to each every 20 ms: a ClientHello of a few hundred bytes takes seconds,
  // and none is finished while the device below comes and goes.
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> dripped{0};
  std::thread dripping([&] {
    for (std::size_t at = 0; at + 1 < hello.size() && !stop; ++at) {
      for (auto& d : drippers) d->send(bytes{hello[at]});
      dripped = at + 1;
      std::this_thread::sleep_for(20ms);
    }
  });
  ASSERT_TRUE(eventually([&] { return dripped.load() >= 20; }));
  const double ms = legitimate_device_ms();
  const std::size_t sent = dripped.load();
  const double running_then = metric(running);
  stop = true;
  dripping.join();
  EXPECT_LT(ms, 1000.0);
  EXPECT_EQ(running_then, 0);
  std::cout << "300 dripped ClientHellos (" << sent << " of " << hello.size()
            << " bytes each so far): handshake and ACK in " << ms << " ms\n";
}

}  // namespace
}  // namespace tgw::test::device_port
