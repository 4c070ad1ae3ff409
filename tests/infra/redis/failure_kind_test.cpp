// Each kind of failure, from Redis' own error replies (Redis 7.0's words) and from the
// client's own conditions: nothing listening, a peer that never answers, one that stops
// reading. Callers branch on the kind, never on the words.
#include "infra/redis/failure_kind.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "infra/redis/connection.hpp"
#include "infra/redis/server_link.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::infra::redis {
namespace {

using namespace std::chrono_literals;

TEST(FailureKind, EachErrorReplyIsClassifiedByItsCodeWord) {
  const struct {
    std::string_view reply;
    failure_kind kind;
  } cases[] = {
      {"NOPERM this user has no permissions to run the 'xadd' command",
       failure_kind::no_permission},
      {"NOPERM this user has no permissions to access one of the keys used as arguments",
       failure_kind::no_permission},
      {"ERR The user executing the script can't run this command or subcommand script: "
       "tgw_persist_batch, on @user_function:12.",
       failure_kind::no_permission},
      {"OOM command not allowed when used memory > 'maxmemory'.", failure_kind::out_of_memory},
      {"OOM command not allowed when used memory > 'maxmemory'. script: tgw_persist_batch, on "
       "@user_function:40.",
       failure_kind::out_of_memory},
      {"READONLY You can't write against a read only replica.", failure_kind::read_only},
      {"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
       failure_kind::read_only},
      {"MOVED 3999 127.0.0.1:7001", failure_kind::moved},
      {"ASK 3999 127.0.0.1:7001", failure_kind::moved},
      {"CROSSSLOT Keys in request don't hash to the same slot", failure_kind::cross_slot},
      {"CLUSTERDOWN Hash slot not served", failure_kind::cluster_down},
      {"CLUSTERDOWN The cluster is down", failure_kind::cluster_down},
      {"TRYAGAIN Multiple keys request during rehashing of slot", failure_kind::try_again},
      {"LOADING Redis is loading the dataset in memory", failure_kind::loading},
      {"NOREPLICAS Not enough good replicas to write.", failure_kind::no_replicas},
      {"MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
       "persist to disk.",
       failure_kind::disk},
      {"BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
       "NOSAVE.",
       failure_kind::busy},
      {"ERR Function not found", failure_kind::script},
      {"ERR user_function:3: Script attempted to access nonexistent global variable 'x' "
       "script: tgw_persist_batch, on @user_function:3.",
       failure_kind::script},
      {"BUSYGROUP Consumer Group name already exists", failure_kind::other},
      {"WRONGTYPE Operation against a key holding the wrong kind of value", failure_kind::other},
      {"ERR unknown command 'FOO', with args beginning with: ", failure_kind::other},
      // A reply is Redis' words, whatever they start with: never the client's failure.
      {"IO is not a Redis error code", failure_kind::other},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(classify_error_reply(c.reply), c.kind)
        << c.reply << " -> " << name_of(classify_error_reply(c.reply));
    const value v = value::make_error(std::string(c.reply));
    EXPECT_EQ(v.failure, c.kind) << c.reply;
    EXPECT_FALSE(is_transport(v.failure)) << c.reply;
  }
}

TEST(FailureKind, OnlyTheClientsOwnFailuresAreTransportAndOnlySlotMovesAreRedirects) {
  EXPECT_TRUE(is_transport(failure_kind::unreachable));
  EXPECT_TRUE(is_transport(failure_kind::timeout));
  EXPECT_TRUE(is_redirect(failure_kind::moved));
  EXPECT_TRUE(is_redirect(failure_kind::cluster_down));
  EXPECT_TRUE(is_redirect(failure_kind::try_again));
  for (const failure_kind k :
       {failure_kind::none, failure_kind::no_permission, failure_kind::out_of_memory,
        failure_kind::read_only, failure_kind::cross_slot, failure_kind::loading,
        failure_kind::no_replicas, failure_kind::disk, failure_kind::busy, failure_kind::script,
        failure_kind::other}) {
    EXPECT_FALSE(is_transport(k)) << name_of(k);
    EXPECT_FALSE(is_redirect(k)) << name_of(k);
  }
}

// A store that reports errors as text copies value::text; read back, the text gives the
// kind the value had.
TEST(FailureKind, TheTextOfAFailureGivesBackItsKind) {
  const value refused = value::make_unreachable("connect to redis://127.0.0.1:1: refused");
  EXPECT_EQ(refused.failure, failure_kind::unreachable);
  EXPECT_EQ(failure_of_text(refused.text), failure_kind::unreachable);
  EXPECT_EQ(transport_reason(refused.text), "connect to redis://127.0.0.1:1: refused");
  const value silent = value::make_transport_error(failure_kind::timeout,
                                                   "127.0.0.1:6379 sent no reply within 2000 ms");
  EXPECT_EQ(failure_of_text(silent.text), failure_kind::timeout);
  EXPECT_EQ(failure_of_text("OOM command not allowed when used memory > 'maxmemory'."),
            failure_kind::out_of_memory);
}

TEST(FailureKind, NothingListeningIsUnreachable) {
  endpoint at;
  at.port = 1;  // nothing listens on port 1
  connection nobody({at, 200ms, 200ms, ""});
  const value v = nobody.command({"PING"});
  ASSERT_TRUE(v.is_error());
  EXPECT_EQ(v.failure, failure_kind::unreachable) << v.text;
}

// A peer that takes the connection and never answers (a paused server): the command's
// reply does not come within the IO timeout.
TEST(FailureKind, APeerThatNeverAnswersIsATimeout) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  server_link link({200ms, 200ms, ""});
  std::string error;
  ASSERT_TRUE(link.adopt(fds[0], endpoint{}, "silent peer", error)) << error;
  const value v = link.command({"PING"});
  EXPECT_EQ(v.failure, failure_kind::timeout) << v.text;
  EXPECT_FALSE(link.is_open()) << "a late reply could not be paired any more";
  ::close(fds[1]);
}

// A peer that stops reading: the commands cannot be written within the IO timeout.
TEST(FailureKind, APeerThatTakesNoBytesIsATimeout) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  server_link link({200ms, 200ms, ""});
  std::string error;
  ASSERT_TRUE(link.adopt(fds[0], endpoint{}, "full peer", error)) << error;
  const std::string big(std::size_t{64} << 20, 'x');  // far more than a socket buffers
  const value v = link.command({"SET", "k", big});
  EXPECT_EQ(v.failure, failure_kind::timeout) << v.text.substr(0, 200);
  ::close(fds[1]);
}

// A peer that hangs up: the link broke, the command may or may not have run.
TEST(FailureKind, APeerThatHangsUpIsUnreachable) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  server_link link({200ms, 200ms, ""});
  std::string error;
  ASSERT_TRUE(link.adopt(fds[0], endpoint{}, "gone peer", error)) << error;
  ::close(fds[1]);
  const value v = link.command({"PING"});
  EXPECT_EQ(v.failure, failure_kind::unreachable) << v.text;
}

// The kinds a single server gives by itself, from a real redis-server.
TEST(FailureKind, ARealServersRefusalsCarryTheirKind) {
  test::redis_server server;
  connection c = server.connect();
  EXPECT_EQ(c.command({"NOSUCHCOMMAND"}).failure, failure_kind::other);
  EXPECT_EQ(c.command({"FCALL", "tgw_no_such_function", "0"}).failure, failure_kind::script);
  ASSERT_EQ(c.command({"CONFIG", "SET", "min-replicas-to-write", "1"}).text, "OK");
  EXPECT_EQ(c.command({"SET", "k", "v"}).failure, failure_kind::no_replicas);
  ASSERT_EQ(c.command({"CONFIG", "SET", "min-replicas-to-write", "0"}).text, "OK");
  ASSERT_EQ(c.command({"CONFIG", "SET", "maxmemory", "1"}).text, "OK");
  EXPECT_EQ(c.command({"SET", "k", "v"}).failure, failure_kind::out_of_memory);
  ASSERT_EQ(c.command({"CONFIG", "SET", "maxmemory", "0"}).text, "OK");
  ASSERT_EQ(c.command({"ACL", "SETUSER", "narrow", "on", "nopass", "+ping"}).text, "OK");
  connection narrow = [&] {
    endpoint at = server.endpoint();
    at.user = "narrow";
    at.password = "x";  // nopass: any password logs in
    return connection({at, 1000ms, 1000ms, ""});
  }();
  EXPECT_EQ(narrow.command({"SET", "k", "v"}).failure, failure_kind::no_permission);
  // Demoted to a replica (of a master that is not there): writes are refused.
  ASSERT_EQ(c.command({"REPLICAOF", "127.0.0.1", "1"}).text, "OK");
  EXPECT_EQ(c.command({"SET", "k", "v"}).failure, failure_kind::read_only);
  EXPECT_EQ(c.command({"REPLICAOF", "NO", "ONE"}).text, "OK");
}

}  // namespace
}  // namespace tgw::infra::redis
