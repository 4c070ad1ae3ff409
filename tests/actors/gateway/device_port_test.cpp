// The device port in the open: TLS, the PROXY protocol of a balancer in front, the
// allowlist (file and Redis) and the per-address limits. A real `tgw serve` against a
// real redis-server, driven by raw sockets and an OpenSSL client; waits poll up to a
// deadline and nothing asserts on how long anything took.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/actors/gateway/device_port_fixture.hpp"
#include "tests/support/raw_tls_client.hpp"

namespace tgw::test::device_port {
namespace {

// --- TLS ---------------------------------------------------------------------------

TEST_F(DevicePort, ATlsDeviceHandshakesSendsAndIsAckedOnlyAfterItsRecordsAreStored) {
  start(tls_flags());
  tls_device d(port, trusting(ca.cert));
  ASSERT_TRUE(d.established()) << d.error();
  EXPECT_EQ(d.server_name(), "gateway-1");
  d.send(handshake_packet(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(packet(3, 1'700'000'000'000));
  ASSERT_EQ(d.receive(4), ack(3));
  EXPECT_EQ(db.command({"XLEN", "telemetry:records"}).integer, 3);
  EXPECT_EQ(
      metric(
          "teltonika_tls_handshakes_total{instance_id=\"gw-port-test\",result=\"established\"} "),
      1);
}

TEST_F(DevicePort, OverTlsALargeFrameAndABurstOfFramesInOneRecordAreAllAcked) {
  start(tls_flags());
  tls_device d(port, trusting(ca.cert));
  ASSERT_TRUE(d.established()) << d.error();
  d.send(handshake_packet(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  // Larger than a read of the gateway's (1,000 bytes): one record, several reads.
  const bytes large = packet(60, 1'700'000'000'000);
  ASSERT_GT(large.size(), 2000U);
  d.send(large);
  ASSERT_EQ(d.receive(4), ack(60));
  // A frame split over two records, as a device on a slow link writes it.
  const bytes split = packet(2, 1'700'000'100'000);
  d.send(bytes(split.begin(), split.begin() + 15));
  d.send(bytes(split.begin() + 15, split.end()));
  ASSERT_EQ(d.receive(4), ack(2));
  // Six frames in one record: more than the frames in flight a connection may have
  // (4), so the rest wait inside OpenSSL until the first ones are ACKed.
  bytes burst;
  for (int i = 0; i < 6; ++i) {
    const bytes p = packet(1, 1'700'000'200'000 + static_cast<std::uint64_t>(i) * 1000);
    burst.insert(burst.end(), p.begin(), p.end());
  }
  d.send(burst);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d.receive(4), ack(1)) << i;
  EXPECT_EQ(db.command({"XLEN", "telemetry:records"}).integer, 60 + 2 + 6);
}

TEST_F(DevicePort, ADeviceThatTrustsAnotherCaRefusesTheGateway) {
  start(tls_flags());
  const pem_files other_ca = make_ca(dir, "other-ca");
  tls_device d(port, trusting(other_ca.cert));
  EXPECT_FALSE(d.established());
  EXPECT_NE(d.error().find("certificate verify failed"), std::string::npos) << d.error();
  EXPECT_EQ(db.command({"XLEN", "telemetry:records"}).integer, 0);
}

TEST_F(DevicePort, WithAClientCaOnlyDevicesWithACertificateItSignedGetIn) {
  const pem_files device_ca = make_ca(dir, "device-ca");
  const pem_files other_ca = make_ca(dir, "rogue-ca");
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--tls-client-ca", device_ca.cert});
  start(flags);

  tls_device good(port, trusting(ca.cert, make_signed(dir, "dev-a", device_ca, 21)));
  ASSERT_TRUE(good.established()) << good.error();
  good.send(handshake_packet(imei_a));
  EXPECT_EQ(good.receive(1), bytes{0x01});

  // TLS 1.3 checks the client certificate after the client's handshake ended: the
  // refusal shows as a closed connection and no verdict.
  tls_device rogue(port, trusting(ca.cert, make_signed(dir, "dev-b", other_ca, 22)));
  rogue.send(handshake_packet(imei_b));
  EXPECT_EQ(rogue.receive(1), std::nullopt);
  tls_device none(port, trusting(ca.cert));
  none.send(handshake_packet(imei_c));
  EXPECT_EQ(none.receive(1), std::nullopt);
  // A simulated fleet that presents a device certificate gets in.
  const pem_files fleet_cert = make_signed(dir, "fleet", device_ca, 23);
  const auto fleet =
      run_command(std::string(TGW_BINARY) + " simulate --tls --tls-cert " + fleet_cert.cert +
                  " --tls-key " + fleet_cert.key + " --count 3 --packets 2 --send-interval 10ms" +
                  " --target 127.0.0.1:" + std::to_string(port) + " --quiet --json");
  EXPECT_EQ(fleet.exit_code, 0) << fleet.out;
  EXPECT_NE(fleet.out.find("\"packets_acked\":6,"), std::string::npos) << fleet.out;
  EXPECT_TRUE(eventually([&] {
    return metric(
               "teltonika_tls_handshakes_total{instance_id=\"gw-port-test\",result=\"failed\"} ") ==
           2;
  }));
  EXPECT_TRUE(journal(imei_b).empty());
  EXPECT_TRUE(journal(imei_c).empty());
}

TEST_F(DevicePort, TlsHandshakesBeyondTheLimitWaitForASlotAndThenRun) {
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--tls-handshakes", "1"});
  start(flags);
  const std::string running = "teltonika_tls_handshakes_running{instance_id=\"gw-port-test\"} ";
  const std::string waiting = "teltonika_tls_handshakes_waiting{instance_id=\"gw-port-test\"} ";
  auto gauges_are = [&](double r, double w) {
    return eventually([&] { return metric(running) == r && metric(waiting) == w; });
  };

  // A connection that says nothing, or only part of its ClientHello, takes no slot:
  // a device that speaks gets the one slot meanwhile.
  auto silent = std::make_unique<device>(port);
  ASSERT_TRUE(silent->connected());
  const bytes hello = client_hello_bytes();
  silent->send(bytes(hello.begin(), hello.begin() + 40));
  {
    tls_device first(port, trusting(ca.cert));
    ASSERT_TRUE(first.established()) << first.error();
    first.send(handshake_packet(imei_b));
    EXPECT_EQ(first.receive(1), bytes{0x01});
  }
  EXPECT_TRUE(gauges_are(0, 0)) << metric(running) << " " << metric(waiting);
  // Its ClientHello whole, it holds the slot.
  silent->send(bytes(hello.begin() + 40, hello.end()));
  ASSERT_TRUE(gauges_are(1, 0)) << metric(running) << " " << metric(waiting);
  // The next one waits, its ClientHello unread.
  std::optional<tls_device> next;
  std::thread connecting([&] { next.emplace(port, trusting(ca.cert)); });
  EXPECT_TRUE(gauges_are(1, 1)) << metric(running) << " " << metric(waiting);
  // The slot passes on when the silent one goes.
  silent.reset();
  connecting.join();
  ASSERT_TRUE(next->established()) << next->error();
  next->send(handshake_packet(imei_a));
  EXPECT_EQ(next->receive(1), bytes{0x01});
  EXPECT_TRUE(gauges_are(0, 0)) << metric(running) << " " << metric(waiting);
}

// A connection still waiting for a slot when its handshake timeout comes is closed
// with the reason and leaves the line; the slots are not lost to either.
TEST_F(DevicePort, ATlsConnectionThatTimesOutWaitingForASlotLeavesTheLine) {
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--tls-handshakes", "1", "--handshake-timeout-ms", "500"});
  start(flags);
  const std::string running = "teltonika_tls_handshakes_running{instance_id=\"gw-port-test\"} ";
  const std::string waiting = "teltonika_tls_handshakes_waiting{instance_id=\"gw-port-test\"} ";
  auto gauges_are = [&](double r, double w) {
    return eventually([&] { return metric(running) == r && metric(waiting) == w; });
  };
  // Both send a ClientHello and nothing more: the first holds the slot, the second
  // waits for it.
  const bytes hello = client_hello_bytes();
  device holder(port);
  holder.send(hello);
  ASSERT_TRUE(gauges_are(1, 0)) << metric(running) << " " << metric(waiting);
  device in_line(port);
  in_line.send(hello);
  ASSERT_TRUE(gauges_are(1, 1)) << metric(running) << " " << metric(waiting);
  EXPECT_TRUE(holder.closed_by_server());
  EXPECT_TRUE(in_line.closed_by_server());
  EXPECT_TRUE(gauges_are(0, 0)) << metric(running) << " " << metric(waiting);
  EXPECT_TRUE(eventually([&] {
    const std::string text = read_file(log);
    std::size_t count = 0;
    for (auto at = text.find("handshake timeout (TLS)"); at != std::string::npos;
         at = text.find("handshake timeout (TLS)", at + 1))
      ++count;
    return count == 2;
  })) << read_file(log);
  // The slot is free again: a device that speaks gets in.
  tls_device next(port, trusting(ca.cert));
  ASSERT_TRUE(next.established()) << next.error();
  next.send(handshake_packet(imei_a));
  EXPECT_EQ(next.receive(1), bytes{0x01});
}

TEST_F(DevicePort, PlainBytesOnTheTlsPortAreClosedWithAReasonAndThePlainPortStaysPlain) {
  const std::uint16_t tls_port = free_port();
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--tls-port", std::to_string(tls_port)});
  start(flags);

  device plain_on_tls(tls_port);
  plain_on_tls.send(handshake_packet(imei_a));
  EXPECT_EQ(plain_on_tls.receive(1), std::nullopt);
  EXPECT_TRUE(plain_on_tls.closed_by_server());
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("closed before its handshake: TLS handshake failed") !=
           std::string::npos;
  })) << read_file(log);
  EXPECT_NE(read_file(log).find("(plain TCP on the TLS port?)"), std::string::npos);
  EXPECT_TRUE(journal(imei_a).empty());

  device plain(port);
  plain.send(handshake_packet(imei_b));
  EXPECT_EQ(plain.receive(1), bytes{0x01});
  tls_device tls(tls_port, trusting(ca.cert));
  ASSERT_TRUE(tls.established()) << tls.error();
  tls.send(handshake_packet(imei_c));
  EXPECT_EQ(tls.receive(1), bytes{0x01});
}

TEST_F(DevicePort,
       ACertificateReloadUnderLoadKeepsOpenConnectionsAndServesNewOnesTheNewCertificate) {
  start(tls_flags());
  tls_device before(port, trusting(ca.cert));
  ASSERT_TRUE(before.established()) << before.error();
  before.send(handshake_packet(imei_a));
  ASSERT_EQ(before.receive(1), bytes{0x01});

  // Load: a TLS fleet sending the whole time the certificate changes.
  child_process fleet({TGW_BINARY, "simulate", "--tls", "--tls-ca", ca.cert, "--count", "20",
                       "--target", "127.0.0.1:" + std::to_string(port), "--send-interval", "20ms",
                       "--duration", "4s", "--quiet", "--json"},
                      dir + "/fleet.log");
  ASSERT_TRUE(eventually([&] { return db.command({"XLEN", "telemetry:records"}).integer > 20; }));

  const pem_files renewed = make_signed(dir, "gateway-2", ca, 12);
  std::filesystem::copy_file(renewed.cert, server_cert.cert,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(renewed.key, server_cert.key,
                             std::filesystem::copy_options::overwrite_existing);
  gateways.back().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return read_file(log).find("SIGHUP: TLS certificate replaced") != std::string::npos;
  })) << read_file(log);

  tls_device after(port, trusting(ca.cert));
  ASSERT_TRUE(after.established()) << after.error();
  EXPECT_EQ(after.server_name(), "gateway-2");
  // The connection opened before the reload goes on with its session.
  before.send(packet(2, 1'700'000'100'000));
  EXPECT_EQ(before.receive(4), ack(2));

  ASSERT_EQ(fleet.wait(), 0) << read_file(dir + "/fleet.log");
  const std::string summary = read_file(dir + "/fleet.log");
  EXPECT_NE(summary.find("\"disconnects\":0"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"connects\":20,"), std::string::npos) << summary;
}

TEST_F(DevicePort, TlsDevicesGoneMidWriteLeaveTheGatewayServingOthers) {
  start(tls_flags());
  // Each device asks for an answer and resets the connection before it comes: the
  // gateway's writes (the verdict, the ACK, close_notify) meet a dead peer.
  for (int i = 0; i < 20; ++i) {
    tls_device d(port, trusting(ca.cert));
    ASSERT_TRUE(d.established()) << d.error();
    d.send(handshake_packet(imei_a));
    if (i % 2 == 1) {
      ASSERT_EQ(d.receive(1), bytes{0x01});
      d.send(packet(1, 1'700'000'000'000 + static_cast<std::uint64_t>(i) * 1000));
    }
    d.reset();
  }
  ASSERT_TRUE(gateways.back().running());
  tls_device after(port, trusting(ca.cert));
  ASSERT_TRUE(after.established()) << after.error();
  after.send(handshake_packet(imei_b));
  EXPECT_EQ(after.receive(1), bytes{0x01});
  after.send(packet(2, 1'700'000'100'000));
  EXPECT_EQ(after.receive(4), ack(2));
  EXPECT_TRUE(gateways.back().running());
}

TEST_F(DevicePort, ACertificateThatNoLongerLoadsKeepsTheOneInForce) {
  start(tls_flags());
  std::ofstream(server_cert.key) << "not a key\n";
  gateways.back().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return read_file(log).find("the certificate in force stays") != std::string::npos;
  })) << read_file(log);
  tls_device d(port, trusting(ca.cert));
  ASSERT_TRUE(d.established()) << d.error();
  EXPECT_EQ(d.server_name(), "gateway-1");
}

TEST_F(DevicePort, BadTlsAndProxyFlagsAreClearErrorsAtStart) {
  const std::string r = "redis://127.0.0.1:" + std::to_string(redis.port());
  struct bad_case {
    std::vector<std::string> flags;
    std::string says;
  };
  const pem_files other = make_signed(dir, "other", ca, 13);
  const bad_case cases[] = {
      {{"--tls-cert", dir + "/missing.crt", "--tls-key", server_cert.key}, "cannot read the file"},
      {{"--tls-cert", server_cert.cert, "--tls-key", other.key},
       "does not belong to the certificate"},
      {{"--tls-cert", server_cert.key, "--tls-key", server_cert.key}, "not a PEM certificate"},
      {{"--tls-cert", server_cert.cert}, "--tls-key"},
      {{"--tls-port", "5999"}, "--tls-cert"},
      {{"--tls-cert", server_cert.cert, "--tls-key", server_cert.key, "--tls-records", "tgw"},
       "--tls-records"},
      {{"--proxy-protocol", "v3"}, "--proxy-protocol"},
      {{"--proxy-protocol", "v1", "--proxy-from", "10.0.0.1/8"}, "bits set past its prefix"},
      {{"--proxy-from", "balancer.example"}, "not an address"},
      {{"--per-address-ipv6-prefix", "129"}, "--per-address-ipv6-prefix"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {TGW_BINARY, "serve", "--redis",        r,
                                     "--port",   "0",     "--metrics-addr", ""};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    child_process bad(argv, dir + "/bad.log");
    EXPECT_EQ(bad.wait(), 2) << c.says;
    EXPECT_NE(read_file(dir + "/bad.log").find(c.says), std::string::npos)
        << c.says << "\n"
        << read_file(dir + "/bad.log");
    std::filesystem::remove(dir + "/bad.log");
  }
}

// --- PROXY protocol ------------------------------------------------------------------

TEST_F(DevicePort, ProxyHeadersV1AndV2GiveTheDeviceAddressToTheJournal) {
  start({"--proxy-protocol", "any"});
  auto v1 = device_behind(port, "PROXY TCP4 198.51.100.7 10.0.0.5 40123 5027\r\n");
  v1->send(handshake_packet(imei_a));
  ASSERT_EQ(v1->receive(1), bytes{0x01});
  auto v2 = device_behind(port, proxy_v2({203, 0, 113, 9}, 51000));
  v2->send(handshake_packet(imei_b));
  ASSERT_EQ(v2->receive(1), bytes{0x01});
  v2->send(packet(1, 1'700'000'000'000));
  EXPECT_EQ(v2->receive(4), ack(1));

  const auto a = journal(imei_a);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.front().at("peer"), "198.51.100.7:40123");
  EXPECT_EQ(a.front().at("via").rfind("127.0.0.1:", 0), 0U) << a.front().at("via");
  const auto b = journal(imei_b);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.front().at("peer"), "203.0.113.9:51000");
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("connected from 203.0.113.9:51000") != std::string::npos;
  }));
}

TEST_F(DevicePort, ConnectionsWithoutAGoodProxyHeaderAreClosedWithTheirReason) {
  start({"--proxy-protocol", "v1", "--handshake-timeout-ms", "500"});
  // A device straight to the port, without the balancer.
  device direct(port);
  direct.send(handshake_packet(imei_a));
  EXPECT_EQ(direct.receive(1), std::nullopt);
  EXPECT_TRUE(direct.closed_by_server());
  // Malformed, the wrong version, oversized, and truncated (it never ends).
  auto malformed = device_behind(port, "PROXY TCP4 198.51.100.7 10.0.0.5 40123\r\n");
  EXPECT_TRUE(malformed->closed_by_server());
  auto v2_on_v1 = device_behind(port, proxy_v2({203, 0, 113, 9}, 51000));
  EXPECT_TRUE(v2_on_v1->closed_by_server());
  auto oversized = device_behind(port, "PROXY UNKNOWN " + std::string(200, 'x'));
  EXPECT_TRUE(oversized->closed_by_server());
  auto truncated = device_behind(port, "PROXY TCP4 198.51.100.7 10.0.");
  EXPECT_TRUE(truncated->closed_by_server());

  ASSERT_TRUE(eventually([&] {
    return read_file(log).find("handshake timeout (no PROXY header)") != std::string::npos;
  }));
  const std::string text = read_file(log);
  for (const char* reason :
       {"expected a PROXY protocol v1 header, got 00 0f 33 35", "PROXY v1 header needs exactly",
        "expected a PROXY protocol v1 header, got 0d 0a", "longer than 107 bytes",
        "handshake timeout (no PROXY header)"})
    EXPECT_NE(text.find(reason), std::string::npos) << reason << "\n" << text;
  EXPECT_EQ(metric("teltonika_connections_total{instance_id=\"gw-port-test\",result=\"refused_"
                   "proxy_header\"} "),
            4);
  EXPECT_TRUE(journal(imei_a).empty());
  EXPECT_EQ(db.command({"XLEN", "telemetry:records"}).integer, 0);
}

TEST_F(DevicePort, TlsBehindABalancerReadsTheProxyHeaderBeforeTheHandshake) {
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--proxy-protocol", "v1"});
  start(flags);
  tls_device d(port, trusting(ca.cert, {}, "PROXY TCP6 2001:db8::7 2001:db8::1 40123 5027\r\n"));
  ASSERT_TRUE(d.established()) << d.error();
  d.send(handshake_packet(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  const auto a = journal(imei_a);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.front().at("peer"), "[2001:db8::7]:40123");
}

TEST_F(DevicePort, ACaptureBehindABalancerHoldsTheDecryptedBytesUnderTheDeviceAddress) {
  const std::string captures = dir + "/captures";
  auto flags = tls_flags();
  flags.insert(flags.end(), {"--proxy-protocol", "v2", "--capture-dir", captures});
  start(flags);
  {
    tls_device d(port, trusting(ca.cert, {}, proxy_v2({203, 0, 113, 9}, 51000)));
    ASSERT_TRUE(d.established()) << d.error();
    d.send(handshake_packet(imei_a));
    ASSERT_EQ(d.receive(1), bytes{0x01});
    d.send(packet(2, 1'700'000'000'000));
    ASSERT_EQ(d.receive(4), ack(2));
  }
  gateways.back().signal(SIGTERM);
  ASSERT_EQ(gateways.back().wait(), 0);

  // Offline replay decodes what the capture holds: only clear bytes decode into the
  // same events, and the peer is the address the capture was written under.
  std::string files;
  for (const auto& e : std::filesystem::directory_iterator(captures))
    files += " " + e.path().string();
  ASSERT_FALSE(files.empty());
  const auto r =
      run_command(std::string(TGW_BINARY) + " replay --offline" + files + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"peer\":\"203.0.113.9:51000\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"type\":\"records_accepted\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"records\":\"2\""), std::string::npos) << r.out;
}

// --- who may connect -------------------------------------------------------------------

TEST_F(DevicePort, AnAllowlistReloadDisconnectsADeviceNoLongerListed) {
  const std::string list = dir + "/allowed.txt";
  std::ofstream(list) << imei_a << "\n" << imei_b << "\n";
  start({"--allowlist", list});
  device a(port);
  a.send(handshake_packet(imei_a));
  ASSERT_EQ(a.receive(1), bytes{0x01});
  device b(port);
  b.send(handshake_packet(imei_b));
  ASSERT_EQ(b.receive(1), bytes{0x01});

  std::ofstream(list, std::ios::trunc) << "# b is gone\n" << imei_a << "\n";
  gateways.back().signal(SIGHUP);
  EXPECT_TRUE(b.closed_by_server());
  a.send(packet(1, 1'700'000'000'000));
  EXPECT_EQ(a.receive(4), ack(1));
  EXPECT_TRUE(eventually([&] {
    const auto events = journal(imei_b);
    return !events.empty() && events.back().at("type") == "disconnected" &&
           events.back().at("reason") == "imei no longer allowed";
  }));
  EXPECT_EQ(metric("teltonika_allowlist_disconnects_total{instance_id=\"gw-port-test\"} "), 1);
  EXPECT_EQ(metric("teltonika_allowlist_imeis{instance_id=\"gw-port-test\"} "), 1);
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("allowlist file " + list +
                               " reloaded, 1 IMEIs (0 added, 1 removed)") != std::string::npos;
  })) << read_file(log);
  device again(port);
  again.send(handshake_packet(imei_b));
  EXPECT_EQ(again.receive(1), bytes{0x00});
}

TEST_F(DevicePort, TheRedisAllowlistIsSharedByTwoInstances) {
  // Empty or missing: refused at start, as an empty file is.
  {
    child_process empty(
        {TGW_BINARY, "serve", "--redis", "redis://127.0.0.1:" + std::to_string(redis.port()),
         "--port", "0", "--metrics-addr", "", "--allowlist-redis"},
        dir + "/empty.log");
    EXPECT_EQ(empty.wait(), 1);
    EXPECT_NE(read_file(dir + "/empty.log").find("devices:allowed is empty or missing"),
              std::string::npos);
  }
  db.command({"SADD", "devices:allowed", imei_a});
  start({"--allowlist-redis", "--allowlist-refresh-s", "1"}, "gw-one");
  const std::uint16_t port_one = port;
  start({"--allowlist-redis", "--allowlist-refresh-s", "1"}, "gw-two");
  const std::uint16_t port_two = port;

  for (const std::uint16_t p : {port_one, port_two}) {
    device allowed(p);
    allowed.send(handshake_packet(imei_a));
    EXPECT_EQ(allowed.receive(1), bytes{0x01}) << p;
    device refused(p);
    refused.send(handshake_packet(imei_b));
    EXPECT_EQ(refused.receive(1), bytes{0x00}) << p;
  }
  // Added once, admitted by both at their next refresh.
  db.command({"SADD", "devices:allowed", imei_b});
  for (const std::uint16_t p : {port_one, port_two})
    EXPECT_TRUE(eventually([&] {
      device d(p);
      d.send(handshake_packet(imei_b));
      return d.receive(1) == bytes{0x01};
    })) << p;
  // Removed once: its connections on both instances end.
  device on_one(port_one);
  on_one.send(handshake_packet(imei_a));
  ASSERT_EQ(on_one.receive(1), bytes{0x01});
  device on_two(port_two);
  on_two.send(handshake_packet(imei_a));
  ASSERT_EQ(on_two.receive(1), bytes{0x01});
  db.command({"SREM", "devices:allowed", imei_a});
  EXPECT_TRUE(eventually([&] { return on_one.closed_by_server(); }));
  EXPECT_TRUE(eventually([&] { return on_two.closed_by_server(); }));
}

TEST_F(DevicePort, PerAddressLimitsRefuseTheExcessAndServeOtherAddresses) {
  // Addresses come from PROXY headers: the limits count the device's own address.
  start({"--proxy-protocol", "v1", "--per-address-handshakes", "2", "--per-address-rate", "0"});
  const std::string busy = "PROXY TCP4 198.51.100.7 10.0.0.5 ";
  auto first = device_behind(port, busy + "40001 5027\r\n");
  auto second = device_behind(port, busy + "40002 5027\r\n");
  // Both still in their handshake (no IMEI yet): a third from the address is refused.
  ASSERT_TRUE(eventually([&] {
    return metric("teltonika_handshakes_in_progress{instance_id=\"gw-port-test\"} ") == 2;
  }));
  auto third = device_behind(port, busy + "40003 5027\r\n");
  EXPECT_TRUE(third->closed_by_server());
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("too many handshakes in progress from 198.51.100.7") !=
           std::string::npos;
  }));
  // Another address is served meanwhile.
  auto other = device_behind(port, "PROXY TCP4 198.51.100.8 10.0.0.5 40004 5027\r\n");
  other->send(handshake_packet(imei_b));
  EXPECT_EQ(other->receive(1), bytes{0x01});
  // A finished handshake frees its place.
  first->send(handshake_packet(imei_a));
  ASSERT_EQ(first->receive(1), bytes{0x01});
  auto fourth = device_behind(port, busy + "40005 5027\r\n");
  fourth->send(handshake_packet(imei_c));
  EXPECT_EQ(fourth->receive(1), bytes{0x01});
  EXPECT_EQ(metric("teltonika_connections_total{instance_id=\"gw-port-test\",result=\"refused_"
                   "address_limit\"} "),
            1);
}

TEST_F(DevicePort, AConnectionRateLimitRefusesABurstFromOneAddressOnly) {
  start({"--proxy-protocol", "v1", "--per-address-rate", "0.05", "--per-address-burst", "2"});
  int served = 0;
  for (int i = 0; i < 4; ++i) {
    auto d = device_behind(
        port, "PROXY TCP4 203.0.113.50 10.0.0.5 " + std::to_string(41000 + i) + " 5027\r\n");
    d->send(handshake_packet(imei_a));
    if (d->receive(1) == bytes{0x01}) ++served;
  }
  // A burst of 2, then one new connection every 20 s.
  EXPECT_EQ(served, 2);
  auto other = device_behind(port, "PROXY TCP4 203.0.113.51 10.0.0.5 42000 5027\r\n");
  other->send(handshake_packet(imei_b));
  EXPECT_EQ(other->receive(1), bytes{0x01});
  EXPECT_TRUE(eventually([&] {
    return read_file(log).find("too many new connections from 203.0.113.50") != std::string::npos;
  }));
}

}  // namespace
}  // namespace tgw::test::device_port
