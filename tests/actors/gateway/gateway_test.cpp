// A real `tgw serve` process against a real redis-server (in actors_test) or a real
// 3+3 Redis Cluster (in actors_cluster_test, see redis_backend), driven by raw sockets
// that speak the device side of the protocol. Waits poll up to a deadline; nothing here
// asserts on how long anything took.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "codecs/avl_encode.hpp"
#include "codecs/imei.hpp"
#include "infra/redis/key_slot.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_backend.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

codecs::imei make_imei(const char* digits) {
  codecs::imei id;
  EXPECT_EQ(codecs::imei::parse(digits, id), codecs::errc::ok);
  return id;
}

bytes handshake(const char* digits) {
  bytes out;
  codecs::encode_imei_packet(make_imei(digits), out);
  return out;
}

std::vector<codecs::avl_record_data> sample_records(int n, std::uint64_t t0) {
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

bytes packet(int n, std::uint64_t t0, codecs::codec_id codec = codecs::codec_id::codec8e) {
  bytes out;
  const auto records = sample_records(n, t0);
  EXPECT_EQ(codecs::encode_avl_frame(codec, records, out), codecs::errc::ok);
  return out;
}

bytes ack(std::uint32_t n) {
  return {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
          static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
}

std::string scrape_metrics(std::uint16_t port) {
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

constexpr const char* imei_a = "356307042441013";

TEST_F(Gateway, AcceptsAHandshakeAndJournalsIt) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  EXPECT_EQ(d.receive(1), bytes{0x01});
  EXPECT_EQ(journal_types(imei_a), std::vector<std::string>{"identified"});
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "1");
}

TEST_F(Gateway, RejectsAnImeiOutsideTheAllowlist) {
  const std::string list = ::testing::TempDir() + "/allowlist.txt";
  std::ofstream(list) << "# allowed\n356307042441013\n";
  start({"--allowlist", list});
  device allowed(port);
  allowed.send(handshake(imei_a));
  EXPECT_EQ(allowed.receive(1), bytes{0x01});
  device other(port);
  other.send(handshake("123456789012345"));
  EXPECT_EQ(other.receive(1), bytes{0x00});
  EXPECT_TRUE(other.closed_by_server());
}

TEST_F(Gateway, AcksTheRecordCountAfterStoringEveryField) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(packet(3, 1'700'000'000'000));
  EXPECT_EQ(d.receive(4), ack(3));
  ASSERT_EQ(stream_length(), 3);
  const auto entries = telemetry_of(imei_a);
  const auto& fields = entries.elements.at(1).elements.at(1).elements;
  std::map<std::string, std::string> f;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) f[fields[i].text] = fields[i + 1].text;
  EXPECT_EQ(f["imei"], imei_a);
  EXPECT_EQ(f["ts"], "1700000001000");
  EXPECT_EQ(f["pri"], "1");
  EXPECT_EQ(f["lon"], "252616689");
  EXPECT_EQ(f["lat"], "546992511");
  EXPECT_EQ(f["alt"], "105");
  EXPECT_EQ(f["ang"], "90");
  EXPECT_EQ(f["sat"], "12");
  EXPECT_EQ(f["spd"], "41");
  EXPECT_EQ(f["evt"], "239");
  EXPECT_EQ(f["io"], R"([[239,"1"],[66,"12345"],[16,"987654"]])");
  EXPECT_EQ(f["v"], "3");
  EXPECT_EQ(f["codec"], "8E");
  EXPECT_EQ(f["gen"], "");
}

// Connections are spread over the io threads, one io_context each; devices on every
// thread get their ACKs, and a device's packets stay in order on its thread. The
// writers linger for more writes before each batch, which delays ACKs, not loses them.
TEST_F(Gateway, DevicesSpreadOverSeveralIoThreadsAreAllServed) {
  start({"--io-threads", "3", "--actor-threads", "2", "--writer-shards", "2", "--writer-linger-us",
         "500"});
  std::vector<std::unique_ptr<device>> devices;
  for (int i = 0; i < 7; ++i) {
    devices.push_back(std::make_unique<device>(port));
    devices.back()->send(handshake(std::to_string(356307042441100 + i).c_str()));
    ASSERT_EQ(devices.back()->receive(1), bytes{0x01}) << i;
  }
  for (std::uint64_t round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < devices.size(); ++i) {
      devices[i]->send(packet(2, 1'700'000'000'000 + 10'000 * round));
      EXPECT_EQ(devices[i]->receive(4), ack(2)) << "device " << i << ", round " << round;
    }
  EXPECT_EQ(stream_length(), 7 * 3 * 2);
}

/// The scheduling policy of each thread of process `pid` (a thread that ends while they
/// are read is left out).
std::vector<int> thread_policies(int pid) {
  std::vector<int> policies;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    const int policy = ::sched_getscheduler(std::stoi(task.path().filename().string()));
    if (policy >= 0) policies.push_back(policy);
  }
  return policies;
}

TEST_F(Gateway, EveryThreadRunsUnderTheChosenCpuPolicy) {
  // `keep`: what the process was started with, here this test's own policy.
  const std::pair<const char*, int> cases[] = {
      {"batch", SCHED_BATCH}, {"normal", SCHED_OTHER}, {"keep", ::sched_getscheduler(0)}};
  for (const auto& [flag, expected] : cases) {
    start({"--cpu-policy", flag});
    const auto policies = thread_policies(gateway->pid());
    EXPECT_GT(policies.size(), 4U) << flag;  // io, actor workers, writers, registry...
    EXPECT_EQ(std::count(policies.begin(), policies.end(), expected),
              static_cast<std::ptrdiff_t>(policies.size()))
        << flag;
    gateway->signal(SIGTERM);
    ASSERT_EQ(gateway->wait(), 0) << flag;
  }
}

/// Everything the gateway process wrote to its log so far.
std::string read_log() {
  std::ifstream in(::testing::TempDir() + "/gateway.log");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Whether process `pid` has a shared object whose path contains `name` mapped.
bool maps_library(int pid, std::string_view name) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

TEST_F(Gateway, RunsOnTheAllocatorItWasBuiltWithAndSaysWhichAtStartUp) {
  start();
  // The log file is shared by every gateway test and appended to: find this gateway's
  // line by its port.
  const std::string mine = "listening on 127.0.0.1:" + std::to_string(port) + " ";
  ASSERT_TRUE(eventually([&] { return read_log().find(mine) != std::string::npos; }));
  const std::string log = read_log();
  const std::string line = log.substr(log.find(mine));
  const std::string said = line.substr(0, line.find('\n'));
  if (TGW_WITH_JEMALLOC) {
    EXPECT_TRUE(maps_library(gateway->pid(), "libjemalloc"));
    EXPECT_NE(said.find(", jemalloc 5."), std::string::npos) << said;
  } else {
    EXPECT_FALSE(maps_library(gateway->pid(), "libjemalloc"));
    EXPECT_NE(said.find(", system malloc"), std::string::npos) << said;
  }
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
}

TEST_F(Gateway, FramesSplitAnywhereOrMergedAreHandledAlike) {
  start();
  device d(port);
  bytes first = handshake(imei_a);
  const bytes p = packet(2, 1'700'000'100'000, codecs::codec_id::codec8);
  // Handshake and the first bytes of the packet in one write, the rest byte by byte.
  first.insert(first.end(), p.begin(), p.begin() + 5);
  d.send(first);
  ASSERT_EQ(d.receive(1), bytes{0x01});
  for (std::size_t i = 5; i < p.size(); ++i) d.send({p[i]});
  EXPECT_EQ(d.receive(4), ack(2));
  // A keep-alive byte and a Codec 16 packet in one write.
  bytes merged{0xFF};
  const bytes q = packet(1, 1'700'000'200'000, codecs::codec_id::codec16);
  merged.insert(merged.end(), q.begin(), q.end());
  d.send(merged);
  EXPECT_EQ(d.receive(4), ack(1));
  EXPECT_EQ(stream_length(), 3);
}

// A connection reads a bounded chunk at a time and stops reading while a frame awaits
// its ACK. Bytes left in the socket when reading stopped must be read when it resumes,
// without waiting for more to arrive: the device sends nothing more until it has its
// ACKs.
TEST_F(Gateway, ABurstOfSeveralReadsIsAllReadWhileAtMostOneFrameIsInFlight) {
  start({"--max-frames-in-flight", "1"});
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  bytes burst;
  for (int i = 0; i < 8; ++i) {
    const bytes p = packet(10, 1'700'000'000'000 + static_cast<std::uint64_t>(i) * 100'000);
    burst.insert(burst.end(), p.begin(), p.end());
  }
  ASSERT_GT(burst.size(), 3000U) << "the burst must span several reads";
  d.send(burst);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(d.receive(4), ack(10)) << "packet " << i;
  EXPECT_EQ(stream_length(), 80);
}

TEST_F(Gateway, ABadCrcGetsNoAckAndIsJournaled) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  bytes bad = packet(1, 1'700'000'000'000);
  bad.back() ^= 0x01;
  d.send(bad);
  EXPECT_FALSE(d.receive(4).has_value());
  EXPECT_EQ(stream_length(), 0);
  EXPECT_TRUE(eventually([&] {
    const auto t = journal_types(imei_a);
    return t.size() == 2 && t[1] == "frame_rejected";
  }));
  // The session goes on: a good packet is ACKed.
  d.send(packet(1, 1'700'000'000'000));
  EXPECT_EQ(d.receive(4), ack(1));
}

TEST_F(Gateway, AResentPacketIsAckedAndStoredOnce) {
  start();
  const bytes p = packet(2, 1'700'000'000'000);
  {
    device d(port);
    d.send(handshake(imei_a));
    ASSERT_EQ(d.receive(1), bytes{0x01});
    d.send(p);
    ASSERT_EQ(d.receive(4), ack(2));
  }
  // The ACK was "lost": the device reconnects and sends the same packet again.
  device again(port);
  again.send(handshake(imei_a));
  ASSERT_EQ(again.receive(1), bytes{0x01});
  again.send(p);
  EXPECT_EQ(again.receive(4), ack(2));
  EXPECT_EQ(stream_length(), 2);
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "records_total"}).text, "2");
}

TEST_F(Gateway, ClosesAnOversizeLengthAStalledHandshakeAndAnIdleSocket) {
  start({"--handshake-timeout-ms", "300", "--idle-timeout-s", "1", "--max-frame-size", "2048"});
  device stalled(port);
  stalled.send({0x00});  // half a handshake, then nothing
  EXPECT_TRUE(stalled.closed_by_server());

  device oversize(port);
  oversize.send(handshake(imei_a));
  ASSERT_EQ(oversize.receive(1), bytes{0x01});
  oversize.send({0, 0, 0, 0, 0, 0x10, 0, 0});  // declares 1 MiB
  EXPECT_TRUE(oversize.closed_by_server());

  device idle(port);
  idle.send(handshake("123456789012345"));
  ASSERT_EQ(idle.receive(1), bytes{0x01});
  EXPECT_TRUE(idle.closed_by_server());
  EXPECT_TRUE(eventually([&] {
    const auto t = journal_types("123456789012345");
    return !t.empty() && t.back() == "disconnected";
  }));
  const auto events =
      redis.command({"XREVRANGE", journal("123456789012345"), "+", "-", "COUNT", "1"});
  const auto& fields = events.elements.at(0).elements.at(1).elements;
  EXPECT_EQ(fields.back().text, "idle timeout");
}

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

TEST_F(Gateway, SigtermDrainsAndExitsZero) {
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(packet(1, 1'700'000'000'000));
  ASSERT_EQ(d.receive(4), ack(1));
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
  EXPECT_TRUE(d.closed_by_server());
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "0");
}

// On a cluster, a packet whose key shard's slot has no master (CLUSTERDOWN) gets no
// ACK and nothing of it is stored; once the slot is served again, the device's resend
// is ACKed and stored once. The other devices go on meanwhile.
TEST_F(Gateway, OnAClusterAPacketWhoseSlotHasNoMasterIsNotAckedUntilItIsServedAgain) {
  if (!backend.on_cluster()) GTEST_SKIP() << "cluster only";
  start();
  const char* other_imei = "356307042441021";
  ASSERT_NE(backend.prefix(imei_a), backend.prefix(other_imei));
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  device other(port);
  other.send(handshake(other_imei));
  ASSERT_EQ(other.receive(1), bytes{0x01});
  unserved_slot no_master(backend.cluster(), infra::redis::key_slot(backend.prefix(imei_a)));
  ASSERT_TRUE(no_master.taken());
  const bytes pending = packet(1, 1'700'000'000'000);
  d.send(pending);
  EXPECT_FALSE(d.receive(4).has_value()) << "ACKed while its slot had no master";
  EXPECT_EQ(stream_length(), 0);
  other.send(packet(1, 1'700'000'000'000));
  EXPECT_EQ(other.receive(4), ack(1)) << "a device of another shard was held up";
  ASSERT_TRUE(no_master.serve_again());
  ASSERT_TRUE(eventually(
      [&] {
        d.send(pending);
        return d.receive(4) == ack(1);
      },
      20s));
  EXPECT_EQ(telemetry_of(imei_a).elements.size(), 1U);
  EXPECT_EQ(stream_length(), 2);
}

TEST_F(Gateway, BadFlagsAndUnreachableRedisAreClearErrors) {
  child_process bad({TGW_BINARY, "serve", "--crc", "sometimes"}, ::testing::TempDir() + "/bad.log");
  EXPECT_EQ(bad.wait(), 2);
  child_process bad_policy({TGW_BINARY, "serve", "--cpu-policy", "fast"},
                           ::testing::TempDir() + "/bad-policy.log");
  EXPECT_EQ(bad_policy.wait(), 2);
  auto said = [](const std::string& log) {
    std::ifstream in(log);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  // Key shards are a cluster's: a single node refuses them.
  const std::string shards_log = ::testing::TempDir() + "/shards.log";
  child_process shards_on_node({TGW_BINARY, "serve", "--redis", "redis://127.0.0.1:1",
                                "--telemetry-shards", "4", "--port", "0", "--metrics-addr", ""},
                               shards_log);
  EXPECT_EQ(shards_on_node.wait(), 2);
  EXPECT_NE(said(shards_log).find("--telemetry-shards: only a Redis Cluster"), std::string::npos)
      << said(shards_log);
  if (!backend.on_cluster()) {
    // A cluster URL naming a node that is not in cluster mode.
    const std::string log = ::testing::TempDir() + "/not-cluster.log";
    child_process not_cluster({TGW_BINARY, "serve", "--redis",
                               "redis+cluster://127.0.0.1:" + std::to_string(server().port()),
                               "--port", "0", "--metrics-addr", ""},
                              log);
    EXPECT_EQ(not_cluster.wait(), 1);
    EXPECT_NE(said(log).find("is not a cluster node"), std::string::npos) << said(log);
  }
  child_process unreachable(
      {TGW_BINARY, "serve", "--redis", "redis://127.0.0.1:" + std::to_string(free_port()), "--port",
       "0", "--metrics-addr", ""},
      ::testing::TempDir() + "/unreachable.log");
  EXPECT_EQ(unreachable.wait(), 1);
}

/// Sends one datagram to the gateway's UDP port and waits for a reply.
std::optional<bytes> udp_exchange(std::uint16_t port, const bytes& datagram) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&addr),
                 sizeof addr);
  bytes reply(64);
  const ssize_t n = ::recv(fd, reply.data(), reply.size(), 0);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  reply.resize(static_cast<std::size_t>(n));
  return reply;
}

TEST_F(Gateway, AnswersUdpAfterPersistingAndStoresAResendOnce) {
  start();
  bytes datagram;
  const auto records = sample_records(2, 1'700'000'000'000);
  ASSERT_EQ(codecs::encode_udp_datagram(0xCAFE, 0x07, make_imei(imei_a), codecs::codec_id::codec8e,
                                        records, datagram),
            codecs::errc::ok);
  const bytes expected{0x00, 0x05, 0xCA, 0xFE, 0x01, 0x07, 0x02};
  EXPECT_EQ(udp_exchange(port, datagram), expected);
  EXPECT_EQ(stream_length(), 2);
  EXPECT_EQ(udp_exchange(port, datagram), expected);  // the device did not get the reply
  EXPECT_EQ(stream_length(), 2);
  bytes malformed = datagram;
  malformed[1] ^= 0x01;  // length field no longer matches
  EXPECT_FALSE(udp_exchange(port, malformed).has_value());
  // UDP has no handshake: the first datagram introduces the device in the journal.
  EXPECT_EQ(journal_types(imei_a),
            (std::vector<std::string>{"identified", "records_accepted", "packet_resent"}));
  const auto first = redis.command({"XRANGE", journal(imei_a), "-", "+"});
  const auto& fields = first.elements.at(0).elements.at(1).elements;
  ASSERT_EQ(fields.size(), 10U);
  EXPECT_EQ(fields[6].text, "peer");
  EXPECT_TRUE(fields[7].text.starts_with("127.0.0.1:")) << fields[7].text;
  EXPECT_EQ(fields[8].text, "transport");
  EXPECT_EQ(fields[9].text, "udp");
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "1");
}

TEST_F(Gateway, AQuietUdpDeviceIsJournaledDisconnectedAndBackAgain) {
  start({"--udp-idle-timeout-s", "1"});
  bytes datagram;
  ASSERT_EQ(codecs::encode_udp_datagram(0x0001, 0x01, make_imei(imei_a), codecs::codec_id::codec8e,
                                        sample_records(1, 1'700'000'000'000), datagram),
            codecs::errc::ok);
  ASSERT_TRUE(udp_exchange(port, datagram).has_value());
  EXPECT_TRUE(eventually([&] {
    const auto t = journal_types(imei_a);
    return !t.empty() && t.back() == "disconnected";
  }));
  const auto last = redis.command({"XREVRANGE", journal(imei_a), "+", "-", "COUNT", "1"});
  EXPECT_EQ(last.elements.at(0).elements.at(1).elements.back().text, "udp idle");
  EXPECT_EQ(redis.command({"HGET", device_key(imei_a), "online"}).text, "0");

  datagram.clear();  // the encoder appends
  ASSERT_EQ(codecs::encode_udp_datagram(0x0002, 0x02, make_imei(imei_a), codecs::codec_id::codec8e,
                                        sample_records(1, 1'700'000'100'000), datagram),
            codecs::errc::ok);
  ASSERT_TRUE(udp_exchange(port, datagram).has_value());
  EXPECT_EQ(journal_types(imei_a),
            (std::vector<std::string>{"identified", "records_accepted", "disconnected",
                                      "identified", "records_accepted"}));
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
  EXPECT_EQ(journal_types(imei_a).back(), "disconnected");
  const auto gone = redis.command({"XREVRANGE", journal(imei_a), "+", "-", "COUNT", "1"});
  EXPECT_EQ(gone.elements.at(0).elements.at(1).elements.back().text, "shutdown");
}

class DurableGateway : public Gateway {
 protected:
  DurableGateway() : Gateway(true) {}
};

TEST_F(DurableGateway, RedisKilledMidStreamLosesNothingAckedAndDoublesNothing) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  start();
  device d(port);
  d.send(handshake(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  std::uint64_t t = 1'700'000'000'000;
  int acked = 0;
  for (int i = 0; i < 5; ++i, t += 10'000) {
    d.send(packet(2, t));
    ASSERT_EQ(d.receive(4), ack(2));
    acked += 2;
  }
  ASSERT_EQ(stream_length(), acked);
  server().stop();
  // While Redis is down the device gets no ACK and keeps its records...
  const bytes pending = packet(2, t);
  d.send(pending);
  EXPECT_FALSE(d.receive(4).has_value());
  server().start();
  // ...and resends them, as a tracker does after its ACK timeout, until one is ACKed.
  ASSERT_TRUE(eventually(
      [&] {
        d.send(pending);
        return d.receive(4) == ack(2);
      },
      20s));
  acked += 2;
  redis.command({"PING"});  // the fixture's connection fails once, then reconnects
  EXPECT_EQ(stream_length(), acked);
}

}  // namespace
}  // namespace tgw::test
