// A gateway on a replicated Redis behind Sentinel, with --ack-replicas 1: the master
// dies in the middle of ingest, the gateway finds the new master by itself, and every
// record it ACKed is there, once. Short of the replicas it asks for, nothing is ACKed
// and the shortfall is counted; ACKs resume when the replica returns. Real redis-server,
// redis-sentinel and tgw processes; waits poll up to a deadline and assert no timing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "codecs/command.hpp"
#include "codecs/imei.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_ha.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"
#include "tests/support/tracker.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* imei = "356307042441013";

/// Record times in the telemetry stream of the server on `port`, with their counts.
std::map<std::string, int> stored_times(redis_ha& ha, std::uint16_t port) {
  auto conn = ha.connect(port);
  return test::stored_times(conn);
}

class Failover : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& extra) {
    port = free_port();
    metrics_port = free_port();
    std::vector<std::string> argv = {TGW_BINARY,
                                     "serve",
                                     "--port",
                                     std::to_string(port),
                                     "--bind",
                                     "127.0.0.1",
                                     "--redis",
                                     ha.url(),
                                     "--metrics-addr",
                                     "127.0.0.1:" + std::to_string(metrics_port),
                                     "--instance-id",
                                     "gw-failover",
                                     "--ack-replicas-timeout-ms",
                                     "300"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    gateway.emplace(argv, ::testing::TempDir() + "/failover-gateway.log");
    ASSERT_TRUE(eventually([&] { return device(port).connected(); }, 20s))
        << "gateway did not start";
  }

  redis_ha ha{2};
  std::uint16_t port = 0;
  std::uint16_t metrics_port = 0;
  std::optional<child_process> gateway;
};

// --ack-replicas equal to the replicas (2): whichever replica is promoted holds every
// ACKed record. After the kill one replica is left until the old master returns as a
// replica, and until then nothing is ACKed; the device resends meanwhile.
TEST_F(Failover, IngestResumesOnTheNewMasterWithEveryAckedRecordThere) {
  start({"--ack-replicas", "2"});
  tracker t(port, imei);
  std::set<std::string> acked;
  std::uint64_t ts = 1'700'000'000'000;
  for (int i = 0; i < 20; ++i, ts += 1000) {
    ASSERT_TRUE(t.deliver(ts)) << "packet " << i;
    acked.insert(std::to_string(ts));
  }
  const std::uint16_t old_master = ha.data_ports()[0];
  ha.kill(old_master);
  ASSERT_TRUE(ha.wait_for_new_master(old_master, 30s));
  ha.restart(old_master);  // back empty; the sentinels make it a replica
  // Packets go on through the failover; each is resent until the gateway ACKs it.
  for (int i = 0; i < 20; ++i, ts += 1000) {
    ASSERT_TRUE(t.deliver(ts)) << "packet " << i << " after the kill";
    acked.insert(std::to_string(ts));
  }
  // A promoted replica that lacks the function libraries (flushed here, as a replica
  // set up from a backup without them would): the writers load them again.
  ASSERT_EQ(ha.connect(ha.master_port()).command({"FUNCTION", "FLUSH", "SYNC"}).text, "OK");
  for (int i = 0; i < 5; ++i, ts += 1000) {
    ASSERT_TRUE(t.deliver(ts)) << "packet " << i << " after the library was flushed";
    acked.insert(std::to_string(ts));
  }
  const auto stored = stored_times(ha, ha.master_port());
  for (const auto& time : acked) {
    const auto it = stored.find(time);
    EXPECT_TRUE(it != stored.end()) << "ACKed record " << time << " lost in the failover";
    if (it != stored.end()) {
      EXPECT_EQ(it->second, 1) << "record " << time << " stored twice";
    }
  }
  // The new master has the function library the writers call.
  const auto library =
      ha.connect(ha.master_port()).command({"FUNCTION", "LIST", "LIBRARYNAME", "tgw_gateway"});
  EXPECT_EQ(library.elements.size(), 1U);
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
}

TEST_F(Failover, ShortOfReplicasNothingIsAckedUntilTheReplicaReturns) {
  start({"--ack-replicas", "2"});
  tracker t(port, imei);
  ASSERT_TRUE(t.deliver(1'700'000'000'000));
  const std::uint16_t replica = ha.data_ports()[1];
  ha.kill(replica);
  device d(port);
  d.send(handshake_packet(imei));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(timed_packet(1'700'000'001'000));
  EXPECT_EQ(d.receive(4), std::nullopt) << "ACKed without a replica";
  EXPECT_TRUE(eventually([&] {
    return http_get(metrics_port, "/metrics")
                   .find(
                       "teltonika_persist_failures_total{instance_id=\"gw-failover\","
                       "reason=\"replicas\"} ") != std::string::npos &&
           http_get(metrics_port, "/metrics").find("reason=\"replicas\"} 0") == std::string::npos;
  }));
  ha.restart(replica);
  ASSERT_TRUE(ha.wait_for_replica(replica, 30s));
  EXPECT_TRUE(t.deliver(1'700'000'001'000));
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
}

/// `tgw command send` to the device while it answers like a tracker, for as long as the
/// publisher waits; its exit code (0 when the device's answer came back).
int command_round_trip(const std::string& url, const device& d, const std::string& text) {
  auto sent = std::async(std::launch::async, [&] {
    return run_tgw("command send --redis '" + url + "' --imei " + imei + " --text " + text +
                   " --timeout 20s");
  });
  while (sent.wait_for(0s) != std::future_status::ready) {
    const auto got = receive_command(d);  // waits up to the socket's 2 s
    if (got) answer_command(d, "OK " + *got);
  }
  return sent.get().exit_code;
}

// The command path lives in Redis too: the instance's stream, its consumer group and
// the pending entries list. All of it moves with a failover, and commands go on.
TEST_F(Failover, CommandsReachTheDeviceBeforeAndAfterAFailover) {
  start({"--ack-replicas", "1"});
  device d(port);
  d.send(handshake_packet(imei));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  // The registry entry must be there before a publisher can route to the device.
  ASSERT_TRUE(eventually([&] {
    return ha.connect(ha.master_port()).command({"HGET", "connections:registry", imei}).text ==
           "gw-failover";
  }));
  EXPECT_EQ(command_round_trip(ha.url(), d, "before"), 0);
  const std::uint16_t old_master = ha.master_port();
  // Replicated before the kill, or the registry entry could be the write the failover
  // loses (the registry repairs itself, but only on its next write).
  ASSERT_EQ(ha.connect(old_master).command({"WAIT", "2", "2000"}).integer, 2);
  ha.kill(old_master);
  ASSERT_TRUE(ha.wait_for_new_master(old_master, 30s));
  int code = -1;
  for (int attempt = 0; attempt < 5 && code != 0; ++attempt)
    code = command_round_trip(ha.url(), d, "after");
  EXPECT_EQ(code, 0);
  // Nothing left pending in the consumer group on the new master.
  const auto pending =
      ha.connect(ha.master_port()).command({"XPENDING", "commands:outbound:gw-failover", "ingest"});
  ASSERT_TRUE(pending.is_array()) << pending.text;
  EXPECT_EQ(pending.elements.at(0).integer, 0);
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
}

// The registry and the janitor live in Redis too: after a failover a device that
// connects is registered on the new master, and an instance that died meanwhile is
// cleaned up there by the janitor of one that lives.
TEST_F(Failover, TheRegistryAndTheJanitorCarryOnOnTheNewMaster) {
  const std::vector<std::string> quick = {
      "--heartbeat-interval-ms", "200", "--heartbeat-ttl-s", "2", "--janitor-interval-ms", "300"};
  start(quick);
  const std::uint16_t port_b = free_port();
  std::vector<std::string> argv_b = {
      TGW_BINARY,       "serve",     "--port",        std::to_string(port_b),
      "--bind",         "127.0.0.1", "--redis",       ha.url(),
      "--metrics-addr", "",          "--instance-id", "gw-b"};
  argv_b.insert(argv_b.end(), quick.begin(), quick.end());
  child_process gateway_b(argv_b, ::testing::TempDir() + "/failover-gateway-b.log");
  ASSERT_TRUE(eventually([&] { return device(port_b).connected(); }, 20s));
  auto registry = [&](const std::string& key) {
    return ha.connect(ha.master_port()).command({"HGET", "connections:registry", key});
  };
  device on_a(port);
  on_a.send(handshake_packet(imei));
  ASSERT_EQ(on_a.receive(1), bytes{0x01});
  ASSERT_TRUE(eventually([&] { return registry(imei).text == "gw-failover"; }));
  const std::uint16_t old_master = ha.master_port();
  ASSERT_EQ(ha.connect(old_master).command({"WAIT", "2", "2000"}).integer, 2);
  ha.kill(old_master);
  ASSERT_TRUE(ha.wait_for_new_master(old_master, 30s));
  gateway->signal(SIGKILL);
  gateway->wait();
  // gw-failover's heartbeat expires on the new master; gw-b's janitor evicts its entry.
  EXPECT_TRUE(eventually([&] { return registry(imei).is_nil(); }, 30s)) << registry(imei).text;
  EXPECT_TRUE(eventually([&] {
    return ha.connect(ha.master_port())
               .command({"EXISTS", "instance:devices:gw-failover"})
               .integer == 0;
  }));
  const char* other = "356307042441021";
  device on_b(port_b);
  on_b.send(handshake_packet(other));
  ASSERT_EQ(on_b.receive(1), bytes{0x01});
  EXPECT_TRUE(eventually([&] { return registry(other).text == "gw-b"; }, 20s));
  gateway_b.signal(SIGTERM);
  EXPECT_EQ(gateway_b.wait(), 0);
}

// `tgw node` meets in the same Redis: after a failover its nodes find the new master,
// one of them emits, and the others go on handling messages there.
TEST(NodeFailover, NodesKeepAnEmitterAndHandleMessagesAfterAFailover) {
  redis_ha ha{2};
  std::vector<child_process> nodes;
  for (const char* id : {"a", "b", "c"})
    nodes.emplace_back(
        std::vector<std::string>{TGW_BINARY, "node", "--redis", ha.url(), "--id", id, "--interval",
                                 "50", "--work-ms", "5", "--record-handled"},
        ::testing::TempDir() + "/node-failover-" + id + ".log");
  auto handled = [&] {
    return ha.connect(ha.master_port()).command({"HLEN", "nodes:handled"}).integer;
  };
  ASSERT_TRUE(eventually([&] { return handled() > 5; }, 20s));
  const std::uint16_t old_master = ha.master_port();
  ha.kill(old_master);
  ASSERT_TRUE(ha.wait_for_new_master(old_master, 30s));
  // What the new master held at promotion, then more on top: the cluster goes on there.
  const std::int64_t at_promotion = handled();
  EXPECT_TRUE(eventually([&] { return handled() > at_promotion + 5; }, 30s));
  EXPECT_TRUE(eventually([&] {
    const auto emitter = ha.connect(ha.master_port()).command({"GET", "nodes:emitter"}).text;
    return emitter == "a" || emitter == "b" || emitter == "c";
  }));
  for (auto& n : nodes) n.signal(SIGTERM);
  for (auto& n : nodes) EXPECT_EQ(n.wait(), 0);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Whatever a sentinel URL gets wrong, serve and the client commands say so in one line
// with the exit codes the CLI already uses: 2 for a URL that does not parse or names a
// master the sentinels do not watch, 1 for a deployment that does not answer.
TEST(SentinelErrors, EachMistakeIsOneClearLineAndTheUsualExitCode) {
  redis_ha ha{1};
  const std::string sentinels = ha.url().substr(0, ha.url().rfind('/'));
  const std::string scheme = ha.url().substr(0, ha.url().find("://") + 3);
  const std::string nowhere = scheme + "127.0.0.1:" + std::to_string(free_port()) + "/tgw";
  struct mistake {
    const char* name;
    std::string url;
    int exit_code;
    const char* said;
  };
  const std::vector<mistake> mistakes = {
      // Waiting does not cure a name the sentinels do not watch: a set-up error.
      {"wrong master name", sentinels + "/nope", 2, "no sentinel knows master 'nope'"},
      {"no sentinel", nowhere, 1, "no sentinel reachable for master 'tgw'"},
      {"no master name", sentinels, 2, "missing master name"},
      {"bad port", "redis+sentinel://127.0.0.1:x/tgw", 2, "bad port 'x'"},
  };
  for (const auto& m : mistakes) {
    const std::string log = ::testing::TempDir() + "/sentinel-errors.log";
    std::remove(log.c_str());
    child_process serve(
        {TGW_BINARY, "serve", "--redis", m.url, "--port", "0", "--metrics-addr", ""}, log);
    EXPECT_EQ(serve.wait(), m.exit_code) << m.name << ": " << read_file(log);
    EXPECT_NE(read_file(log).find(m.said), std::string::npos) << m.name << ": " << read_file(log);
    child_process registry({TGW_BINARY, "registry", "--redis", m.url}, log);
    EXPECT_EQ(registry.wait(), m.exit_code) << m.name << " (registry): " << read_file(log);
  }
}

}  // namespace
}  // namespace tgw::test
