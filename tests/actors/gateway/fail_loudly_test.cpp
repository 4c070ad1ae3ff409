// An instance that cannot persist says so: refused at start with one line naming the
// fix, or /readyz 503 within the window with the cause and one warn line per interval,
// a line when it recovers; and the private Redis is kept running. Real redis-server,
// redis-sentinel, Redis Cluster and tgw processes; waits poll up to a deadline.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_cluster.hpp"
#include "tests/support/redis_ha.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"
#include "tests/support/tracker.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* imei = "356307042441013";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The lines of `text` at warn or error level.
std::vector<std::string> loud_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(" warning ") != std::string::npos || line.find(" error ") != std::string::npos)
      out.push_back(line);
  return out;
}

/// The ACL SETUSER command of docs/OPERATIONS.md ("Redis ACLs"), as arguments: the
/// document is the test's input, so it cannot drift from what the gateway needs.
std::vector<std::string> documented_acl() {
  const std::string doc = read_file(std::string(TGW_SOURCE_DIR) + "/docs/OPERATIONS.md");
  const auto at = doc.find("    ACL SETUSER tgw");
  if (at == std::string::npos) return {};
  std::string command;
  std::istringstream in(doc.substr(at));
  for (std::string line; std::getline(in, line);) {
    const bool more = !line.empty() && line.back() == '\\';
    if (more) line.pop_back();
    command += line + " ";
    if (!more) break;
  }
  std::vector<std::string> argv;
  std::istringstream words(command);
  for (std::string w; words >> w;) argv.push_back(w);
  return argv;
}

/// One `tgw serve` on free ports, its log in the test's temporary directory.
class gateway {
 public:
  /// Instance id `instance`, or gw-NAME.
  gateway(const std::string& name, std::vector<std::string> extra, const std::string& instance = "")
      : log_(log_path(name)) {
    port_ = free_port();
    metrics_port_ = free_port();
    std::vector<std::string> argv = {TGW_BINARY,       "serve",
                                     "--port",         std::to_string(port_),
                                     "--bind",         "127.0.0.1",
                                     "--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port_),
                                     "--instance-id",  instance.empty() ? "gw-" + name : instance};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_.emplace(argv, log_);
  }
  static std::string log_path(const std::string& name) {
    const std::string path = ::testing::TempDir() + "/fail-loudly-" + name + ".log";
    std::filesystem::remove(path);
    return path;
  }
  bool listening() {
    return eventually([&] { return device(port_).connected() || !process_->running(); }, 20s) &&
           process_->running();
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// /readyz's whole response.
  [[nodiscard]] std::string readyz() const { return http_get(metrics_port_, "/readyz"); }
  [[nodiscard]] std::string metrics() const { return http_get(metrics_port_, "/metrics"); }
  [[nodiscard]] std::string log() const { return read_file(log_); }
  child_process& process() { return *process_; }
  int stop() {
    process_->signal(SIGTERM);
    return process_->wait();
  }

 private:
  std::string log_;
  std::uint16_t port_ = 0;
  std::uint16_t metrics_port_ = 0;
  std::optional<child_process> process_;
};

bool not_ready(const std::string& response) {
  return response.find(" 503 ") != std::string::npos;
}

// ---- Refused at start -----------------------------------------------------------------

// The ACL user of the documentation, without +time (which the persist Function calls):
// every persist would fail. Refused at start, exit 1, one line naming +time; checked
// both through ACL DRYRUN and, for a user that may not run it, through the canary.
TEST(FailLoudly, AnAclUserLackingAPermissionIsRefusedAtStartNamingIt) {
  redis_server redis;
  auto admin = redis.connect();
  std::vector<std::string> acl = documented_acl();
  ASSERT_FALSE(acl.empty()) << "no ACL SETUSER tgw block in docs/OPERATIONS.md";
  std::erase(acl, "+time");
  for (const bool dryrun : {true, false}) {
    std::vector<std::string> user = acl;
    if (!dryrun) std::erase(user, "+acl|dryrun");
    ASSERT_EQ(admin.command({"ACL", "DELUSER", "tgw"}).type, infra::redis::value::kind::integer);
    ASSERT_EQ(admin.command(user).text, "OK");
    const auto r =
        run_tgw("serve --port 0 --metrics-addr '' --redis redis://tgw:secret@127.0.0.1:" +
                std::to_string(redis.port()) + " --log-format text");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    const auto loud = loud_lines(r.out);
    ASSERT_EQ(loud.size(), 1U) << r.out;
    EXPECT_NE(loud[0].find("+time"), std::string::npos) << loud[0];
    EXPECT_EQ(r.out.find("listening"), std::string::npos) << "the device port opened:\n" << r.out;
  }
  // Nothing of the canary is left behind.
  EXPECT_EQ(admin.command({"KEYS", "*probe*"}).elements.size(), 0U);
}

// The ACL example of docs/OPERATIONS.md, verbatim: a gateway on that user starts and
// ACKs, its heartbeat and registry entry are written, and a command reaches the device.
TEST(FailLoudly, TheDocumentedAclUserServesDevices) {
  redis_server redis;
  auto admin = redis.connect();
  const std::vector<std::string> acl = documented_acl();
  ASSERT_FALSE(acl.empty());
  ASSERT_EQ(admin.command(acl).text, "OK");
  const std::string url = "redis://tgw:secret@127.0.0.1:" + std::to_string(redis.port());
  gateway gw("acl", {"--redis", url});
  ASSERT_TRUE(gw.listening()) << gw.log();
  tracker t(gw.port(), imei);
  EXPECT_TRUE(t.deliver(1'700'000'000'000, 20s)) << gw.log();
  EXPECT_TRUE(eventually([&] {
    return admin.command({"HGET", "connections:registry", imei}).text == "gw-acl";
  }));
  EXPECT_EQ(admin.command({"EXISTS", "instance:heartbeat:gw-acl"}).integer, 1);
  EXPECT_TRUE(loud_lines(gw.log()).empty()) << gw.log();
  EXPECT_EQ(gw.stop(), 0);
}

// redis:// naming a Redis Cluster node, or a Sentinel: refused at start as a usage
// error (exit 2), one line naming the URL to use, nothing left behind.
TEST(FailLoudly, AUrlWhoseSchemeDoesNotFitTheServerIsAUsageError) {
  redis_cluster cluster;
  const std::string node = "127.0.0.1:" + std::to_string(cluster.ports().front());
  auto r = run_tgw("serve --port 0 --metrics-addr '' --redis redis://" + node);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(loud_lines(r.out).size(), 1U) << r.out;
  EXPECT_NE(r.out.find("use redis+cluster://" + node), std::string::npos) << r.out;
  r = run_tgw("registry --redis redis://" + node);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("redis+cluster://" + node), std::string::npos) << r.out;
  EXPECT_EQ(infra::redis::connection({cluster.endpoint(), 1000ms, 1000ms, ""})
                .command({"GET", "tgw:telemetry-shards"})
                .type,
            infra::redis::value::kind::nil);

  redis_ha ha(1);
  const std::string sentinel = "127.0.0.1:" + std::to_string(ha.sentinel_ports().front());
  r = run_tgw("serve --port 0 --metrics-addr '' --redis redis://" + sentinel);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(loud_lines(r.out).size(), 1U) << r.out;
  EXPECT_NE(r.out.find("is a Redis Sentinel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redis+sentinel://" + sentinel + "/MASTER (it watches: tgw)"),
            std::string::npos)
      << r.out;
  r = run_tgw("node --redis redis://" + sentinel);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("redis+sentinel://"), std::string::npos) << r.out;
}

// ---- Stalled at run time ----------------------------------------------------------------

// A permission taken away while the gateway runs: /readyz turns 503 within the window
// naming the cause and the fix, the warn line comes once and then once per interval;
// the permission back, ACKs resume, /readyz is 200 and one line says it recovered.
TEST(FailLoudly, APermissionLostAtRunTimeIsNotReadyWithItsCause) {
  redis_server redis;
  auto admin = redis.connect();
  ASSERT_EQ(admin.command(documented_acl()).text, "OK");
  gateway gw("noperm", {"--redis", "redis://tgw:secret@127.0.0.1:" + std::to_string(redis.port()),
                        "--readiness-window-ms", "1000", "--failure-log-interval-s", "2"});
  ASSERT_TRUE(gw.listening()) << gw.log();
  tracker t(gw.port(), imei);
  ASSERT_TRUE(t.deliver(1'700'000'000'000, 20s));
  ASSERT_EQ(admin.command({"ACL", "SETUSER", "tgw", "-time"}).text, "OK");
  const auto lost_at = std::chrono::steady_clock::now();
  // The device keeps resending: each attempt fails.
  EXPECT_FALSE(t.deliver(1'700'000'001'000, 7s));
  const std::string readyz = gw.readyz();
  EXPECT_TRUE(not_ready(readyz)) << readyz;
  EXPECT_NE(readyz.find("+time"), std::string::npos) << readyz;
  EXPECT_NE(gw.metrics().find("teltonika_persist_stall_seconds{instance_id=\"gw-noperm\","
                              "reason=\"noperm\"}"),
            std::string::npos);
  // What /readyz says, as a gauge an alert can watch.
  EXPECT_NE(
      gw.metrics().find("teltonika_ready{instance_id=\"gw-noperm\",reason=\"persist_noperm\"} 0\n"),
      std::string::npos)
      << gw.metrics();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lost_at).count();
  const std::string log = gw.log();
  const std::size_t first = count_of(log, "persist: failing, devices are not ACKed");
  const std::size_t again = count_of(log, "persist: still failing");
  EXPECT_EQ(first, 1U) << log;
  // One line per 2 s interval at most (the first one included), and the spell lasted
  // long enough for at least one more.
  EXPECT_GE(again, 1U) << log;
  EXPECT_LE(static_cast<double>(first + again), seconds / 2 + 1) << log;
  EXPECT_NE(log.find("the Redis ACL user needs +time"), std::string::npos) << log;

  ASSERT_EQ(admin.command({"ACL", "SETUSER", "tgw", "+time"}).text, "OK");
  EXPECT_TRUE(t.deliver(1'700'000'001'000, 20s));
  EXPECT_FALSE(not_ready(gw.readyz())) << gw.readyz();
  EXPECT_NE(gw.metrics().find("teltonika_ready{instance_id=\"gw-noperm\",reason=\"\"} 1\n"),
            std::string::npos)
      << gw.metrics();
  // The spell ends once a second has passed without a failure (failure_log's settle),
  // with no further traffic needed.
  EXPECT_TRUE(eventually([&] { return count_of(gw.log(), "persist: recovered after") == 1; }, 5s))
      << gw.log();
  EXPECT_EQ(gw.stop(), 0);
}

// TLS to Redis failing at run time (the server comes back with a certificate of another
// CA, as after a botched rotation): /readyz 503 with the cause and its fix, and the
// stall's reason is tls.
TEST(FailLoudly, ATlsFailureAtRunTimeIsNotReadyWithItsCause) {
  redis_server redis(false, redis_transport::tls);
  const auto& files = redis_tls_files::shared();
  gateway gw("tls", {"--redis", redis.url(), "--redis-tls-ca", files.ca.cert,
                     "--readiness-window-ms", "1000"});
  ASSERT_TRUE(gw.listening()) << gw.log();
  tracker t(gw.port(), imei);
  ASSERT_TRUE(t.deliver(1'700'000'000'000, 20s)) << gw.log();
  redis.stop();
  const pem_files rogue_ca = make_ca(files.dir, "runtime-rogue-ca");
  const pem_files rogue = make_signed(files.dir, "runtime-rogue", rogue_ca, 21);
  child_process other(
      {"redis-server", "--port", "0", "--tls-port", std::to_string(redis.port()), "--tls-cert-file",
       rogue.cert, "--tls-key-file", rogue.key, "--tls-ca-cert-file", rogue_ca.cert,
       "--tls-auth-clients", "no", "--save", ""},
      ::testing::TempDir() + "/fail-loudly-rogue-redis.log");
  EXPECT_FALSE(t.deliver(1'700'000'001'000, 7s));
  const std::string readyz = gw.readyz();
  EXPECT_TRUE(not_ready(readyz)) << readyz;
  EXPECT_NE(readyz.find("not signed by a trusted CA"), std::string::npos) << readyz;
  EXPECT_NE(readyz.find("--redis-tls-ca"), std::string::npos) << readyz;
  EXPECT_NE(gw.metrics().find("reason=\"tls\""), std::string::npos) << gw.metrics();
  gw.stop();
}

// The documented quick start with one replica and --ack-replicas 1, its master killed:
// the promoted master has no replica, so nothing can be ACKed. Not ACKing is right;
// saying nothing would be wrong: /readyz 503 names the replicas, the log says it at
// warn, and when the old master is back as a replica, ACKs and readiness return.
TEST(FailLoudly, ReplicasShortAfterAFailoverIsNotReadyAndSaysWhy) {
  redis_ha ha(1);
  gateway gw("replicas", {"--redis", ha.url(), "--ack-replicas", "1", "--ack-replicas-timeout-ms",
                          "300", "--readiness-window-ms", "1000", "--failure-log-interval-s", "2"});
  ASSERT_TRUE(gw.listening()) << gw.log();
  tracker t(gw.port(), imei);
  ASSERT_TRUE(t.deliver(1'700'000'000'000, 20s));
  const std::uint16_t old_master = ha.data_ports()[0];
  ha.kill(old_master);
  ASSERT_TRUE(ha.wait_for_new_master(old_master, 30s));
  EXPECT_FALSE(t.deliver(1'700'000'001'000, 6s)) << "ACKed without a replica";
  EXPECT_TRUE(eventually(
      [&] {
        const std::string r = gw.readyz();
        return not_ready(r) && r.find("WAIT confirmed 0 of 1") != std::string::npos;
      },
      10s))
      << gw.readyz();
  EXPECT_NE(gw.metrics().find(
                "teltonika_ready{instance_id=\"gw-replicas\",reason=\"persist_replicas\"} 0\n"),
            std::string::npos)
      << gw.metrics();
  const std::string log = gw.log();
  EXPECT_NE(log.find("bring a replica back (or lower --ack-replicas)"), std::string::npos) << log;
  ha.restart(old_master);  // back empty: the sentinels make it a replica
  ASSERT_TRUE(ha.wait_for_replica(old_master, 30s));
  EXPECT_TRUE(t.deliver(1'700'000'001'000, 30s));
  EXPECT_TRUE(eventually([&] { return !not_ready(gw.readyz()); })) << gw.readyz();
  // The failover itself may be a spell of its own (connection errors) before the
  // replicas one: each ends with its line, the replicas' last.
  // It ends a second after its last failure (failure_log's settle).
  EXPECT_TRUE(eventually(
      [&] { return gw.log().find("persist: recovered after") != std::string::npos; }, 5s));
  const std::string log_after = gw.log();
  const auto recovered = log_after.rfind("persist: recovered after");
  ASSERT_NE(recovered, std::string::npos) << log_after;
  EXPECT_NE(log_after.find("replicas", recovered), std::string::npos) << log_after;
  EXPECT_EQ(gw.stop(), 0);
}

// ---- One instance id, one process ------------------------------------------------------

std::string heartbeat_of(infra::redis::connection& conn, const std::string& instance) {
  return conn.command({"GET", "instance:heartbeat:" + instance}).text;
}

// Two gateways on one Redis with one --instance-id would share its registry entries,
// its command stream and its heartbeat. The second refuses to start, exit 1, naming the
// process that holds the id; the first runs on and its heartbeat stays.
TEST(FailLoudly, ASecondGatewayWithTheSameInstanceIdRefusesToStart) {
  redis_server redis;
  auto conn = redis.connect();
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port());
  gateway first("twin", {"--redis", url, "--heartbeat-interval-ms", "300"});
  ASSERT_TRUE(first.listening()) << first.log();
  gateway second("twin-2", {"--redis", url, "--heartbeat-interval-ms", "300"}, "gw-twin");
  ASSERT_TRUE(eventually([&] { return !second.process().running(); }, 30s)) << second.log();
  EXPECT_EQ(second.process().wait(), 1) << second.log();
  const std::string log = second.log();
  EXPECT_NE(log.find("instance id 'gw-twin' is in use: its heartbeat is renewed by pid " +
                     std::to_string(first.process().pid()) + " on host"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("listening"), std::string::npos) << log;
  // The first one is unharmed: its heartbeat is still there, and it stops cleanly.
  EXPECT_NE(heartbeat_of(conn, "gw-twin").find("pid=" + std::to_string(first.process().pid())),
            std::string::npos);
  EXPECT_TRUE(eventually([&] { return !not_ready(first.readyz()); }, 10s)) << first.readyz();
  EXPECT_EQ(first.stop(), 0) << first.log();
}

// A gateway killed outright leaves its heartbeat for up to its TTL: one started on the
// same host with the same id at once sees that the process is gone and takes the id
// over without waiting.
TEST(FailLoudly, AGatewayRestartedAfterACrashTakesItsInstanceIdOverAtOnce) {
  redis_server redis;
  auto conn = redis.connect();
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port());
  gateway crashed("phoenix", {"--redis", url});
  ASSERT_TRUE(crashed.listening()) << crashed.log();
  crashed.process().signal(SIGKILL);
  crashed.process().wait();
  ASSERT_EQ(conn.command({"EXISTS", "instance:heartbeat:gw-phoenix"}).integer, 1);
  gateway restarted("phoenix-2", {"--redis", url}, "gw-phoenix");
  ASSERT_TRUE(restarted.listening()) << restarted.log();
  EXPECT_NE(restarted.log().find("which no longer runs: taking it over"), std::string::npos)
      << restarted.log();
  EXPECT_EQ(restarted.stop(), 0) << restarted.log();
}

// A holder on another host cannot be asked: it is watched for one renewal interval.
// Not renewed: presumed dead and taken over. Renewed: live, and the start is refused.
TEST(FailLoudly, AHeartbeatHeldElsewhereIsTakenOverOnlyIfItIsNotRenewed) {
  redis_server redis;
  auto conn = redis.connect();
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port());
  const std::string elsewhere = "host=gw-elsewhere pid=7 boot=b pidns=p start=1 every_ms=500";
  ASSERT_EQ(conn.command({"SET", "instance:heartbeat:gw-far", elsewhere, "EX", "90"}).text, "OK");
  gateway taker("far", {"--redis", url});
  ASSERT_TRUE(taker.listening()) << taker.log();
  EXPECT_NE(taker.log().find("the heartbeat of pid 7 on host gw-elsewhere was not renewed"),
            std::string::npos)
      << taker.log();
  EXPECT_NE(heartbeat_of(conn, "gw-far").find("pid=" + std::to_string(taker.process().pid())),
            std::string::npos);
  EXPECT_EQ(taker.stop(), 0) << taker.log();

  // Renewed while the second one watches (a thread stands in for the live holder).
  ASSERT_EQ(conn.command({"SET", "instance:heartbeat:gw-near", elsewhere, "EX", "90"}).text, "OK");
  std::atomic<bool> renewing{true};
  std::thread holder([&] {
    auto own = redis.connect();
    while (renewing.load()) {
      own.command({"SET", "instance:heartbeat:gw-near", elsewhere, "EX", "90"});
      std::this_thread::sleep_for(200ms);
    }
  });
  gateway refused("near", {"--redis", url});
  const bool ended = eventually([&] { return !refused.process().running(); }, 30s);
  renewing.store(false);
  holder.join();
  ASSERT_TRUE(ended) << refused.log();
  EXPECT_EQ(refused.process().wait(), 1) << refused.log();
  EXPECT_NE(refused.log().find("is in use: its heartbeat is renewed by pid 7 on host gw-elsewhere"),
            std::string::npos)
      << refused.log();
}

// A running gateway whose heartbeat another process took over (here written by hand:
// a twin that started while this one was paused past its TTL) says so at error, is
// not ready, and at shutdown leaves that heartbeat alone.
TEST(FailLoudly, AGatewayWhoseHeartbeatIsTakenOverSaysSoAndIsNotReady) {
  redis_server redis;
  auto conn = redis.connect();
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port());
  gateway gw("usurped", {"--redis", url, "--heartbeat-interval-ms", "200"});
  ASSERT_TRUE(gw.listening()) << gw.log();
  ASSERT_TRUE(eventually([&] { return !not_ready(gw.readyz()); }, 10s)) << gw.readyz();
  const std::string twin = "host=gw-twin-host pid=9 boot=b pidns=p start=1 every_ms=200";
  ASSERT_EQ(conn.command({"SET", "instance:heartbeat:gw-usurped", twin, "EX", "90"}).text, "OK");
  ASSERT_TRUE(eventually([&] { return not_ready(gw.readyz()); }, 10s)) << gw.readyz();
  EXPECT_NE(gw.readyz().find("another process with this --instance-id holds the heartbeat"),
            std::string::npos)
      << gw.readyz();
  EXPECT_NE(gw.metrics().find("reason=\"heartbeat_taken\"} 0"), std::string::npos) << gw.metrics();
  ASSERT_TRUE(eventually(
      [&] {
        return gw.log().find("heartbeat is held by pid 9 on host gw-twin-host") !=
               std::string::npos;
      },
      10s))
      << gw.log();
  const auto loud = loud_lines(gw.log());
  EXPECT_TRUE(std::any_of(loud.begin(), loud.end(), [](const std::string& line) {
    return line.find(" error ") != std::string::npos &&
           line.find("--instance-id") != std::string::npos;
  })) << gw.log();
  EXPECT_EQ(heartbeat_of(conn, "gw-usurped"), twin);
  EXPECT_EQ(gw.stop(), 0) << gw.log();
  EXPECT_EQ(heartbeat_of(conn, "gw-usurped"), twin) << "the shutdown deleted the twin's heartbeat";
}

// ---- The private Redis is supervised ----------------------------------------------------

int private_redis_pid(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(R"(private redis-server on \S+ \(pid (\d+)\))")))
    return -1;
  return std::stoi(m[1]);
}

// The private redis-server killed: the gateway logs its exit at error with the status,
// restarts it on the same data dir, and ACKs resume with every ACKed record there once.
TEST(FailLoudly, APrivateRedisThatDiesIsRestartedAndNoAckedRecordIsLost) {
  const std::string dir = ::testing::TempDir() + "/fail-loudly-private";
  std::filesystem::remove_all(dir);
  gateway gw("private", {"--data-dir", dir});
  ASSERT_TRUE(gw.listening()) << gw.log();
  tracker t(gw.port(), imei);
  std::set<std::string> acked;
  std::uint64_t ts = 1'700'000'000'000;
  for (int i = 0; i < 10; ++i, ts += 1000) {
    ASSERT_TRUE(t.deliver(ts, 20s));
    acked.insert(std::to_string(ts));
  }
  const int pid = private_redis_pid(gw.log());
  ASSERT_GT(pid, 0) << gw.log();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 10; ++i, ts += 1000) {
    ASSERT_TRUE(t.deliver(ts, 30s)) << "packet " << i << " after the kill\n" << gw.log();
    acked.insert(std::to_string(ts));
  }
  const std::string log = gw.log();
  EXPECT_NE(log.find("private redis-server exited (killed by signal 9"), std::string::npos) << log;
  EXPECT_NE(log.find("private redis-server restarted"), std::string::npos) << log;
  infra::redis::endpoint private_redis;
  private_redis.unix_socket = dir + "/redis.sock";
  infra::redis::connection conn({private_redis, 1000ms, 2000ms, ""});
  const auto stored = stored_times(conn);
  for (const auto& time : acked) {
    const auto it = stored.find(time);
    EXPECT_TRUE(it != stored.end()) << "ACKed record " << time << " lost";
    if (it != stored.end()) {
      EXPECT_EQ(it->second, 1) << "record " << time << " stored twice";
    }
  }
  EXPECT_EQ(gw.stop(), 0);
}

// A private redis-server that cannot be restarted: after the restarts allowed, the
// gateway exits 1, so that its supervisor (systemd's Restart=) acts.
TEST(FailLoudly, APrivateRedisThatCannotBeRestartedEndsTheGatewayWithExit1) {
  const std::string dir = ::testing::TempDir() + "/fail-loudly-broken";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // Starts redis-server the first time only, then fails as a broken install would.
  const std::string wrapper = dir + "/redis-server-once";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\nif [ -e " << dir << "/started ]; then exit 1; fi\ntouch " << dir
        << "/started\nexec redis-server \"$@\"\n";
  }
  ::chmod(wrapper.c_str(), 0755);
  ::setenv("TGW_REDIS_SERVER", wrapper.c_str(), 1);
  gateway gw("broken", {"--data-dir", dir + "/data", "--embedded-redis-restarts", "2"});
  ::unsetenv("TGW_REDIS_SERVER");
  ASSERT_TRUE(gw.listening()) << gw.log();
  const int pid = private_redis_pid(gw.log());
  ASSERT_GT(pid, 0) << gw.log();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return !gw.process().running(); }, 60s)) << gw.log();
  EXPECT_EQ(gw.process().wait(), 1) << gw.log();
  const std::string log = gw.log();
  EXPECT_NE(log.find("2 restart(s) in a row failed (the last: "), std::string::npos) << log;
  EXPECT_NE(log.find("giving up"), std::string::npos) << log;
  // It says why it stops: no signal was sent to it.
  EXPECT_NE(log.find("stopping: the private redis-server could not be kept running"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("signal 15"), std::string::npos) << log;
}

// The pid of the private redis-server the gateway started last.
int latest_private_redis_pid(const std::string& log) {
  int pid = private_redis_pid(log);
  static const std::regex restarted(R"(private redis-server restarted \(pid (\d+)\))");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), restarted);
       it != std::sregex_iterator(); ++it)
    pid = std::stoi((*it)[1]);
  return pid;
}

// Only restarts that fail count toward giving up: a private redis-server killed again
// and again, each restart bringing it up, is restarted every time (more kills than
// --embedded-redis-restarts allows failures), and the gateway goes on ACKing.
TEST(FailLoudly, APrivateRedisKilledRepeatedlyIsRestartedEveryTime) {
  const std::string dir = ::testing::TempDir() + "/fail-loudly-killed-often";
  std::filesystem::remove_all(dir);
  gateway gw("killed-often", {"--data-dir", dir, "--embedded-redis-restarts", "2"});
  ASSERT_TRUE(gw.listening()) << gw.log();
  std::set<int> killed;
  for (int kill = 0; kill < 4; ++kill) {
    int pid = -1;
    ASSERT_TRUE(eventually(
        [&] {
          pid = latest_private_redis_pid(gw.log());
          return pid > 0 && !killed.contains(pid);
        },
        30s))
        << "kill " << kill << ": no new redis-server\n"
        << gw.log();
    killed.insert(pid);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
  }
  ASSERT_TRUE(eventually([&] { return !killed.contains(latest_private_redis_pid(gw.log())); }, 30s))
      << gw.log();
  ASSERT_TRUE(gw.process().running()) << gw.log();
  tracker t(gw.port(), imei);
  EXPECT_TRUE(t.deliver(1'700'000'000'000, 30s)) << gw.log();
  const std::string log = gw.log();
  EXPECT_EQ(log.find("giving up"), std::string::npos) << log;
  EXPECT_EQ(count_of(log, "private redis-server restarted (pid"), 4U) << log;
  EXPECT_EQ(gw.stop(), 0) << log;
}

}  // namespace
}  // namespace tgw::test
