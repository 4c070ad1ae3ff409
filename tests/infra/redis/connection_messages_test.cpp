// A connection that cannot be made says why, in one line with the fix: a wrong password,
// a database out of range, SELECT on a cluster node, a Sentinel URL that names data
// servers or an unknown master, and a server that takes the connection but never
// answers (paused, or not Redis). Checked on the client's own words and on what `tgw
// devices` prints, against real redis-server and sentinel processes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "infra/redis/connection.hpp"
#include "infra/redis/failure_cause.hpp"
#include "infra/redis/link_errors.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"

namespace tgw::infra::redis {
namespace {

using namespace std::chrono_literals;
using test::child_process;
using test::free_port;
using test::redis_server;

ports::failure_cause refusal(const endpoint& where, std::chrono::milliseconds wait = 1000ms) {
  connection c({where, wait, wait, "messages-test"});
  std::string error;
  EXPECT_FALSE(c.ensure_connected(error)) << where.describe();
  return redis::classify_redis_failure("IO " + error);
}

endpoint at(std::uint16_t port) {
  endpoint e;
  e.port = port;
  return e;
}

bool answers(const endpoint& where) {
  connection c({where, 300ms, 300ms, ""});
  const value v = c.command({"PING"});
  return v.text == "PONG" || v.text.starts_with("NOAUTH");
}

/// A redis-server of its own, for the tests that stop it or give it odd settings.
struct own_server {
  explicit own_server(std::vector<std::string> extra, const std::string& name)
      : port(free_port()),
        process(
            [&] {
              std::vector<std::string> argv = {"redis-server",
                                               "--port",
                                               std::to_string(port),
                                               "--bind",
                                               "127.0.0.1",
                                               "--save",
                                               "",
                                               "--dir",
                                               ::testing::TempDir()};
              argv.insert(argv.end(), extra.begin(), extra.end());
              return argv;
            }(),
            ::testing::TempDir() + "/" + name + ".log") {
    for (int i = 0; i < 200 && !answers(at(port)); ++i) std::this_thread::sleep_for(25ms);
  }
  std::uint16_t port;
  child_process process;
};

/// A TCP port that takes connections (the kernel's backlog) and never reads them: what
/// a client sees of a paused server, or of a port that is not Redis at all.
struct silent_port {
  silent_port() : fd(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd, 16);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~silent_port() { ::close(fd); }
  int fd;
  std::uint16_t port = 0;
};

TEST(ConnectionMessages, AWrongPasswordIsNamedAsSuch) {
  own_server redis({"--requirepass", "right"}, "wrong-password");
  endpoint wrong = at(redis.port);
  wrong.password = "wrong";
  auto cause = refusal(wrong);
  EXPECT_EQ(cause.label, "auth") << ports::describe(cause);
  EXPECT_NE(cause.detail.find("WRONGPASS"), std::string::npos) << cause.detail;
  EXPECT_NE(cause.fix.find("user and password"), std::string::npos) << cause.fix;
  EXPECT_TRUE(redis::is_setup_failure(cause));

  cause = refusal(at(redis.port));  // no password at all
  EXPECT_EQ(cause.label, "auth") << ports::describe(cause);
  EXPECT_NE(cause.detail.find(link_errors::auth_missing), std::string::npos) << cause.detail;

  const auto r =
      test::run_tgw("devices --redis redis://:wrong@127.0.0.1:" + std::to_string(redis.port));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("AUTH refused"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("unreachable"), std::string::npos) << r.out;
}

TEST(ConnectionMessages, ADatabaseOutOfRangeIsNamedAsSuch) {
  redis_server redis;
  endpoint where = redis.endpoint();
  where.db = 99;
  const auto cause = refusal(where);
  EXPECT_EQ(cause.label, "database") << ports::describe(cause);
  EXPECT_NE(cause.detail.find("SELECT 99"), std::string::npos) << cause.detail;
  EXPECT_NE(cause.fix.find("databases"), std::string::npos) << cause.fix;

  const auto r = test::run_tgw("devices --redis " + redis.url() + "/99");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("SELECT refused"), std::string::npos) << r.out;
}

TEST(ConnectionMessages, SelectOnAClusterNodeNamesTheClusterUrl) {
  // The bus port is named: by default it is the port plus 10,000, out of range for a free
  // port above 55,535. The configuration file is the process's own, as Redis locks it.
  const auto bus = std::to_string(free_port());
  own_server node({"--cluster-enabled", "yes", "--cluster-port", bus, "--cluster-config-file",
                   ::testing::TempDir() + "/select-nodes-" + bus + ".conf"},
                  "select-on-cluster");
  endpoint where = at(node.port);
  where.db = 1;
  const auto cause = refusal(where);
  EXPECT_EQ(cause.label, "cluster_mode") << ports::describe(cause);
  EXPECT_NE(cause.fix.find("redis+cluster://"), std::string::npos) << cause.fix;
}

TEST(ConnectionMessages, ASentinelUrlNamingDataServersOrAnUnknownMasterIsNamed) {
  redis_server data;
  std::string error;
  auto wrong_kind =
      parse_redis_url("redis+sentinel://127.0.0.1:" + std::to_string(data.port()) + "/tgw", error);
  ASSERT_TRUE(wrong_kind) << error;
  auto cause = refusal(*wrong_kind);
  EXPECT_EQ(cause.label, "sentinel") << ports::describe(cause);
  EXPECT_NE(cause.detail.find(link_errors::not_a_sentinel), std::string::npos) << cause.detail;
  EXPECT_NE(cause.fix.find("redis://host:port"), std::string::npos) << cause.fix;

  const std::uint16_t sentinel_port = free_port();
  const std::string conf = ::testing::TempDir() + "/messages-sentinel.conf";
  std::ofstream(conf) << "port " << sentinel_port << "\nbind 127.0.0.1\nsentinel monitor tgw "
                      << "127.0.0.1 " << data.port() << " 1\n";
  child_process sentinel({"redis-server", conf, "--sentinel"},
                         ::testing::TempDir() + "/messages-sentinel.log");
  for (int i = 0; i < 200 && !answers(at(sentinel_port)); ++i) std::this_thread::sleep_for(25ms);
  auto wrong_name = parse_redis_url(
      "redis+sentinel://127.0.0.1:" + std::to_string(sentinel_port) + "/mymaster", error);
  ASSERT_TRUE(wrong_name) << error;
  cause = refusal(*wrong_name);
  EXPECT_EQ(cause.label, "sentinel") << ports::describe(cause);
  EXPECT_NE(cause.detail.find("no sentinel knows master 'mymaster'"), std::string::npos)
      << cause.detail;
  EXPECT_NE(cause.detail.find("watches tgw"), std::string::npos) << cause.detail;
}

// A paused server and a port that never answers: named within the connect timeout, not
// after the 30 s IO timeout of a reading subcommand, and never as "Resource
// temporarily unavailable".
TEST(ConnectionMessages, AServerThatTakesTheConnectionButNeverAnswersIsNamed) {
  silent_port silent;
  const auto cause = refusal(at(silent.port));
  EXPECT_EQ(cause.label, "timeout") << ports::describe(cause);
  EXPECT_NE(cause.detail.find("accepted the connection but sent no reply within 1000 ms"),
            std::string::npos)
      << cause.detail;
  EXPECT_NE(cause.fix.find("paused"), std::string::npos) << cause.fix;

  const auto r = test::run_tgw("devices --redis redis://127.0.0.1:" + std::to_string(silent.port));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("sent no reply within 2000 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("paused"), std::string::npos) << r.out;
}

TEST(ConnectionMessages, AServerPausedWhileConnectedTimesOutWithItsName) {
  own_server redis({}, "paused");
  connection c({at(redis.port), 1000ms, 500ms, "messages-test"});
  ASSERT_EQ(c.command({"PING"}).text, "PONG");
  redis.process.signal(SIGSTOP);
  const value v = c.command({"PING"});
  redis.process.signal(SIGCONT);
  ASSERT_TRUE(v.is_error());
  EXPECT_NE(v.text.find("redis://127.0.0.1:" + std::to_string(redis.port) +
                        "/0 sent no reply within 500 ms"),
            std::string::npos)
      << v.text;
  EXPECT_EQ(v.text.find("temporarily unavailable"), std::string::npos) << v.text;
  const auto cause = redis::classify_redis_failure(v.text);
  EXPECT_EQ(cause.label, "timeout");
  EXPECT_EQ(c.command({"PING"}).text, "PONG");  // resumed: a fresh connection works
}

}  // namespace
}  // namespace tgw::infra::redis
