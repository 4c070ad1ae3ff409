// The life of a `tgw serve` process as an operator's tools see it: signals from a
// terminal or a service manager, its private redis-server, its data directory, and
// every way a start can fail. Real processes throughout; waits poll up to a deadline
// and nothing asserts on how long anything took.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "codecs/imei.hpp"
#include "infra/redis/connection.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* imei_a = "356307042441013";
constexpr const char* imei_b = "356307042441021";

bytes one_record_packet() {
  codecs::avl_record_data r;
  r.timestamp_ms = 1'700'000'000'000;
  r.priority = 1;
  r.satellites = 9;
  const std::vector<codecs::avl_record_data> records = {r};
  bytes out;
  EXPECT_EQ(codecs::encode_avl_frame(codecs::codec_id::codec8, records, out), codecs::errc::ok);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The log lines at level error (the text format pads the level to five characters).
std::vector<std::string> error_lines(const std::string& log) {
  std::vector<std::string> errors;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find("Z error ") != std::string::npos) errors.push_back(line);
  return errors;
}

bool process_alive(int pid) {
  return ::kill(pid, 0) == 0;
}

/// The children of `pid`'s main thread, which starts the private redis-server.
std::vector<int> children_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<int> children;
  for (int child = 0; in >> child;) children.push_back(child);
  return children;
}

/// Waits for a process that must end by itself; one that hangs is killed and reported
/// as -1, so a hang fails the test instead of stalling the suite.
int wait_for_exit(child_process& process, std::chrono::milliseconds deadline = 30s) {
  if (!eventually([&] { return !process.running(); }, deadline)) {
    process.signal(SIGKILL);
    process.wait();
    return -1;
  }
  return process.wait();
}

class Lifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = ::testing::TempDir() + "/lifecycle-" + info->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    log = dir + "/gateway.log";
  }

  /// `tgw serve` on a free port with `extra` flags; `setsid` puts it in a process
  /// group of its own, as a service manager or a shell job would.
  child_process serve(const std::vector<std::string>& extra, const std::string& log_path) {
    std::vector<std::string> argv = {"setsid",    TGW_BINARY,    "serve", "--bind",
                                     "127.0.0.1", "--log-level", "debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    // Defaults for what `extra` leaves out (CLI11 takes each flag once).
    auto given = [&](const char* flag) {
      return std::find(extra.begin(), extra.end(), flag) != extra.end();
    };
    if (!given("--port")) {
      port = free_port();
      argv.insert(argv.end(), {"--port", std::to_string(port)});
    }
    if (!given("--metrics-addr")) argv.insert(argv.end(), {"--metrics-addr", ""});
    return child_process(argv, log_path);
  }

  bool listening() const { return device(port).connected(); }

  std::string dir;
  std::string log;
  std::uint16_t port = 0;
};

TEST_F(Lifecycle, SighupReloadsTheAllowlistAndNeverStopsTheGateway) {
  redis_server redis;
  const std::string list = dir + "/allowlist.txt";
  std::ofstream(list) << "# one device\n" << imei_a << '\n';
  auto gateway = serve(
      {"--redis", "redis://127.0.0.1:" + std::to_string(redis.port()), "--allowlist", list}, log);
  ASSERT_TRUE(eventually([&] { return listening(); }));
  {
    device b(port);
    b.send(handshake_packet(imei_b));
    EXPECT_EQ(b.receive(1), bytes{0x00});
  }
  std::ofstream(list) << imei_a << '\n' << imei_b << '\n';
  gateway.signal(SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return read_file(log).find("allowlist") != std::string::npos &&
           read_file(log).find("2 IMEIs") != std::string::npos;
  })) << read_file(log);
  EXPECT_TRUE(gateway.running());
  device b(port);
  b.send(handshake_packet(imei_b));
  EXPECT_EQ(b.receive(1), bytes{0x01});

  // A list that no longer loads keeps the one in force.
  std::ofstream(list) << "# emptied by mistake\n";
  gateway.signal(SIGHUP);
  ASSERT_TRUE(
      eventually([&] { return read_file(log).find("keeping the 2 IMEIs") != std::string::npos; }));
  device again(port);
  again.send(handshake_packet(imei_b));
  EXPECT_EQ(again.receive(1), bytes{0x01});

  gateway.signal(SIGTERM);
  EXPECT_EQ(wait_for_exit(gateway), 0);
}

TEST_F(Lifecycle, AnAllowlistOfOnlyCommentsIsRefusedAtStart) {
  const std::string list = dir + "/allowlist.txt";
  std::ofstream(list) << "# nobody yet\n\n   \n";
  auto gateway = serve({"--redis", "redis://127.0.0.1:1", "--allowlist", list}, log);
  EXPECT_EQ(wait_for_exit(gateway), 2);
  EXPECT_NE(read_file(log).find("lists no IMEI"), std::string::npos) << read_file(log);

  std::ofstream(list) << imei_a << "\nnot-an-imei\n";
  auto bad_line = serve({"--redis", "redis://127.0.0.1:1", "--allowlist", list}, log);
  EXPECT_EQ(wait_for_exit(bad_line), 2);
  EXPECT_NE(read_file(log).find("line 2: 'not-an-imei' is not an IMEI"), std::string::npos)
      << read_file(log);
}

TEST_F(Lifecycle, SigtermToTheWholeProcessGroupDrainsBeforeThePrivateRedisStops) {
  auto gateway = serve({"--data-dir", dir + "/data", "--instance-id", "gw-group"}, log);
  ASSERT_TRUE(eventually([&] { return listening(); }, 20s)) << read_file(log);
  device d(port);
  d.send(handshake_packet(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01});
  d.send(one_record_packet());
  ASSERT_EQ(d.receive(4), (bytes{0, 0, 0, 1}));
  // What a terminal's Ctrl-C or `timeout` does: every process of the group is signalled.
  ::kill(-gateway.pid(), SIGTERM);
  EXPECT_EQ(wait_for_exit(gateway), 0);
  const std::string text = read_file(log);
  EXPECT_EQ(error_lines(text), std::vector<std::string>{}) << text;
  EXPECT_EQ(text.find("heartbeat not removed"), std::string::npos) << text;
  EXPECT_NE(text.find("instance gw-group stopped"), std::string::npos) << text;
}

TEST_F(Lifecycle, AKilledGatewayTakesItsPrivateRedisWithIt) {
  auto gateway = serve({"--data-dir", dir + "/data"}, log);
  ASSERT_TRUE(eventually([&] { return listening(); }, 20s)) << read_file(log);
  const std::vector<int> children = children_of(gateway.pid());
  ASSERT_EQ(children.size(), 1U);
  const int redis_pid = children.front();
  ASSERT_TRUE(process_alive(redis_pid));
  gateway.signal(SIGKILL);
  gateway.wait();
  // The server is re-parented and no one reaps it at once: gone means gone or a zombie.
  auto gone = [&] {
    std::ifstream stat("/proc/" + std::to_string(redis_pid) + "/stat");
    std::string pid, name, state;
    return !(stat >> pid >> name >> state) || state == "Z";
  };
  EXPECT_TRUE(eventually(gone, 20s)) << "redis-server " << redis_pid << " outlived its gateway";
  if (!gone()) ::kill(redis_pid, SIGKILL);
}

TEST_F(Lifecycle, ASecondGatewayOnTheSameDataDirFailsNamingTheFirst) {
  auto first = serve({"--data-dir", dir + "/data"}, log);
  ASSERT_TRUE(eventually([&] { return listening(); }, 20s)) << read_file(log);
  const std::string second_log = dir + "/second.log";
  auto second = serve({"--data-dir", dir + "/data"}, second_log);
  EXPECT_EQ(wait_for_exit(second), 1);
  const std::string said = read_file(second_log);
  EXPECT_NE(said.find("is in use by another tgw serve (pid " + std::to_string(first.pid()) + ")"),
            std::string::npos)
      << said;
  EXPECT_EQ(children_of(first.pid()).size(), 1U) << "the first gateway lost its redis-server";
  first.signal(SIGTERM);
  EXPECT_EQ(wait_for_exit(first), 0);
}

// Each start-up failure ends the process by itself, with a non-zero code and one error
// line that names the cause.
TEST_F(Lifecycle, EveryStartUpFailureExitsPromptlyWithOneLineWhy) {
  redis_server redis;
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port());
  // A port some other socket holds.
  const taken_port holder;
  ASSERT_NE(holder.port(), 0);
  const std::string taken = std::to_string(holder.port());
  // A data dir below a regular file can never be created, even by root.
  const std::string file = dir + "/a-file";
  std::ofstream(file) << "x";

  struct failure {
    const char* name;
    std::vector<std::string> flags;
    std::string said;
  };
  // A metrics address without a port is a usage error, found before anything starts.
  {
    const std::string path = dir + "/metrics address.log";
    auto gateway = serve({"--redis", url, "--metrics-addr", "nonsense"}, path);
    EXPECT_EQ(wait_for_exit(gateway), 2) << read_file(path);
    EXPECT_NE(read_file(path).find("--metrics-addr: 'nonsense' is not host:port"),
              std::string::npos)
        << read_file(path);
  }
  const std::vector<failure> failures = {
      {"metrics port in use",
       {"--redis", url, "--metrics-addr", "127.0.0.1:" + taken},
       "cannot serve metrics: 127.0.0.1:" + taken +
           " is in use by another listener; choose another address with --metrics-addr"},
      {"device port in use", {"--redis", url, "--port", taken}, "cannot listen on tcp"},
      {"redis unreachable",
       {"--redis", "redis://127.0.0.1:" + std::to_string(free_port())},
       "cannot use Redis"},
      {"data dir unusable", {"--data-dir", file + "/data"}, "data dir"},
  };
  for (const auto& f : failures) {
    const std::string path = dir + "/" + std::string(f.name) + ".log";
    auto gateway = serve(f.flags, path);
    EXPECT_EQ(wait_for_exit(gateway), 1) << f.name << ": " << read_file(path);
    const auto errors = error_lines(read_file(path));
    ASSERT_EQ(errors.size(), 1U) << f.name << ": " << read_file(path);
    EXPECT_NE(errors.front().find(f.said), std::string::npos) << f.name << ": " << errors.front();
  }
  // No heartbeat is left behind by a start that got as far as the registry.
  auto conn = redis.connect();
  EXPECT_EQ(conn.command({"KEYS", "instance:heartbeat:*"}).elements.size(), 0U);
}

/// The datagrams sent to a unix socket bound at `path`, as systemd's notify socket is.
class notify_socket {
 public:
  explicit notify_socket(const std::string& path) {
    ::unlink(path.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ~notify_socket() { ::close(fd_); }
  notify_socket(const notify_socket&) = delete;
  notify_socket& operator=(const notify_socket&) = delete;

  /// Everything received so far, datagrams separated by '|'; never waits.
  const std::string& drain() {
    char buffer[512];
    for (ssize_t n; (n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT)) > 0;)
      received_ += std::string(buffer, static_cast<std::size_t>(n)) + "|";
    return received_;
  }

 private:
  int fd_ = -1;
  std::string received_;
};

// Under systemd (Type=notify, WatchdogSec=): READY=1 once devices can connect,
// WATCHDOG=1 pings while it works, STOPPING=1 when the drain begins.
TEST_F(Lifecycle, TellsSystemdItIsReadyAliveAndStopping) {
  redis_server redis;
  const std::string path = dir + "/notify.sock";
  notify_socket systemd(path);
  port = free_port();
  child_process gateway(
      {"env", "NOTIFY_SOCKET=" + path, "WATCHDOG_USEC=200000", TGW_BINARY, "serve", "--port",
       std::to_string(port), "--bind", "127.0.0.1", "--metrics-addr", "", "--redis",
       "redis://127.0.0.1:" + std::to_string(redis.port())},
      log);
  ASSERT_TRUE(eventually([&] { return systemd.drain().find("READY=1") != std::string::npos; }));
  EXPECT_TRUE(listening());
  ASSERT_TRUE(eventually([&] {
    const std::string& got = systemd.drain();
    const auto first = got.find("WATCHDOG=1");
    return first != std::string::npos && got.find("WATCHDOG=1", first + 1) != std::string::npos;
  })) << systemd.drain();
  EXPECT_EQ(systemd.drain().find("STOPPING=1"), std::string::npos);
  gateway.signal(SIGTERM);
  EXPECT_EQ(wait_for_exit(gateway), 0);
  EXPECT_NE(systemd.drain().find("STOPPING=1"), std::string::npos) << systemd.drain();
}

}  // namespace
}  // namespace tgw::test
