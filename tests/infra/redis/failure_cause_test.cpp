// Every failure an operator can meet is named with its fix, in Redis' own words.
#include "infra/redis/failure_cause.hpp"

#include <gtest/gtest.h>

#include "infra/telemetry/gateway_library.hpp"

namespace tgw::infra::redis {
namespace {

using ports::failure_cause;

TEST(FailureCause, EachRedisErrorGetsItsCauseAndFix) {
  const struct {
    std::string_view error;
    std::string_view label;
    std::string_view fix_part;
  } cases[] = {
      {"IO connect to 127.0.0.1:6379: Connection refused", "connection", "unreachable"},
      {"NOPERM this user has no permissions to run the 'xadd' command", "noperm", "+xadd"},
      {"NOPERM this user has no permissions to access one of the keys used as arguments", "noperm",
       "~telemetry:*"},
      {"MOVED 3999 127.0.0.1:7001", "cluster_mode", "redis+cluster://"},
      {"CROSSSLOT Keys in request don't hash to the same slot", "cluster_mode", "redis+cluster://"},
      {"CLUSTERDOWN The cluster is down", "cluster_down", "slot"},
      {"OOM command not allowed when used memory > 'maxmemory'.", "oom", "maxmemory"},
      {"LOADING Redis is loading the dataset in memory", "loading", "loading"},
      {"READONLY You can't write against a read only replica.", "readonly", "replica"},
      {"NOREPLICAS Not enough good replicas to write.", "replicas", "min-replicas-to-write"},
      {"MISCONF Redis is configured to save RDB snapshots", "disk", "disk"},
      {"ERR Function not found", "function", "Redis 7"},
      {"ERR something new", "other", ""},
  };
  for (const auto& c : cases) {
    const failure_cause cause = classify_redis_failure(c.error);
    EXPECT_EQ(cause.label, c.label) << c.error;
    EXPECT_NE(cause.fix.find(c.fix_part), std::string::npos) << c.error << " -> " << cause.fix;
    EXPECT_FALSE(cause.detail.empty()) << c.error;
  }
}

// The kind the client gave a failure picks its cause, whatever the words: the client's
// own failures name their fix by the phrase of the server link (link_errors).
TEST(FailureCause, TheKindPicksTheCauseNotTheWords) {
  using redis::failure_kind;
  const failure_cause refused =
      classify_redis_failure(failure_kind::unreachable, "connect to 127.0.0.1:6379: refused");
  EXPECT_EQ(refused.label, "connection");
  EXPECT_EQ(refused.detail, "connect to 127.0.0.1:6379: refused");
  EXPECT_EQ(classify_redis_failure(failure_kind::timeout,
                                   "IO 127.0.0.1:6379 sent no reply within 2000 ms")
                .label,
            "timeout");
  EXPECT_EQ(classify_redis_failure(failure_kind::timeout,
                                   "IO 127.0.0.1:6379 sent no reply within 2000 ms")
                .detail,
            "127.0.0.1:6379 sent no reply within 2000 ms")
      << "the prefix that marks the client's failures in logs is not part of the detail";
  // A reply whose words look like the client's is still Redis' reply.
  EXPECT_EQ(classify_redis_failure(failure_kind::other, "IO is not a Redis error code").label,
            "other");
  EXPECT_EQ(classify_redis_failure(failure_kind::out_of_memory, "any words").label, "oom");
  EXPECT_EQ(classify_redis_failure(failure_kind::read_only, "any words").label, "readonly");
  EXPECT_EQ(classify_redis_failure(failure_kind::no_permission, "any words").label, "noperm");
  EXPECT_EQ(
      classify_redis_failure(failure_kind::moved, "MOVED 1 127.0.0.1:7001", false, {}, true).label,
      "slot_moved");
  EXPECT_EQ(classify_connect_failure("connect to 127.0.0.1:6379: Connection refused").label,
            "connection");
}

// Through the cluster client, MOVED and ASK are a slot that moved during a failover or a
// reshard (the write goes again to its new master), not a cluster named with redis://.
TEST(FailureCause, OnAClusterAMovedSlotIsNotASetupMistake) {
  for (const std::string_view error : {"MOVED 7597 127.0.0.1:22501", "ASK 7597 127.0.0.1:22501"}) {
    const failure_cause cause = classify_redis_failure(error, false, {}, true);
    EXPECT_EQ(cause.label, "slot_moved") << error;
    EXPECT_NE(cause.fix.find("--persist-retry-ms"), std::string::npos) << cause.fix;
    EXPECT_EQ(cause.fix.find("redis+cluster://"), std::string::npos) << cause.fix;
  }
  EXPECT_EQ(classify_redis_failure("CROSSSLOT Keys in request don't hash to the same slot", false,
                                   {}, true)
                .label,
            "cluster_mode");
}

// What WAIT did not confirm is a replica shortfall, whatever the text says.
TEST(FailureCause, AnUnderReplicatedWriteNamesTheReplicasSetting) {
  const failure_cause cause =
      classify_redis_failure("replicas: WAIT confirmed 0 of 1 within 300 ms", true);
  EXPECT_EQ(cause.label, "replicas");
  EXPECT_NE(cause.detail.find("WAIT confirmed 0 of 1"), std::string::npos);
  EXPECT_NE(cause.fix.find("--ack-replicas"), std::string::npos);
}

// Inside a Function an ACL refusal names only a line of the library: the line names the
// command, so the fix can say which permission to add.
TEST(FailureCause, AnAclRefusalInsideAFunctionNamesTheCommandOfItsLine) {
  const std::string_view library = telemetry::gateway_library_source();
  std::size_t line = 1;
  for (std::size_t i = 0; i < library.find("redis.call('TIME')"); ++i)
    if (library[i] == '\n') ++line;
  const std::string error =
      "ERR The user executing the script can't run this command or subcommand script: "
      "tgw_persist_batch, on @user_function:" +
      std::to_string(line) + ".";
  const failure_cause cause = classify_redis_failure(error, false, library);
  EXPECT_EQ(cause.label, "noperm");
  EXPECT_NE(cause.fix.find("needs +time"), std::string::npos) << cause.fix;
  // Without the library the command is unknown, and the fix says so in general terms.
  const failure_cause blind = classify_redis_failure(error);
  EXPECT_EQ(blind.label, "noperm");
  EXPECT_EQ(blind.fix.find("+time"), std::string::npos) << blind.fix;
  // A line that calls nothing, or is past the end, names nothing.
  EXPECT_EQ(classify_redis_failure("ERR The user executing the script can't run this command "
                                   "script: f, on @user_function:1.",
                                   false, library)
                .fix.find("needs +"),
            std::string::npos);
  EXPECT_EQ(
      classify_redis_failure("ERR ... user executing the script can't ... on @user_function:99999.",
                             false, library)
          .label,
      "noperm");
}

TEST(FailureCause, WhatFailedLeadsTheDetail) {
  const ports::store_failure failed =
      store_failure_of_text("IO Connection refused", {}, "heartbeat");
  EXPECT_EQ(failed.kind, ports::failure_kind::unreachable);
  EXPECT_EQ(failed.cause.label, "connection");
  EXPECT_EQ(failed.cause.detail, "heartbeat: Connection refused");
  EXPECT_EQ(failed.text(), failed.cause.detail + ": " + failed.cause.fix);
}

// The port's kind of every Redis kind: what a transport failure is stays apart from
// what the server refused, and a reply of the wrong shape is a failure all the same.
TEST(FailureCause, EachRedisKindMapsToThePortsKind) {
  using port = ports::failure_kind;
  EXPECT_EQ(port_kind(failure_kind::unreachable), port::unreachable);
  EXPECT_EQ(port_kind(failure_kind::timeout), port::timeout);
  EXPECT_EQ(port_kind(failure_kind::no_permission), port::no_permission);
  EXPECT_EQ(port_kind(failure_kind::out_of_memory), port::out_of_memory);
  EXPECT_EQ(port_kind(failure_kind::read_only), port::read_only);
  EXPECT_EQ(port_kind(failure_kind::moved), port::moved);
  EXPECT_EQ(port_kind(failure_kind::try_again), port::moved);
  EXPECT_EQ(port_kind(failure_kind::loading), port::unavailable);
  EXPECT_EQ(port_kind(failure_kind::no_replicas), port::unavailable);
  EXPECT_EQ(port_kind(failure_kind::script), port::other);
  EXPECT_EQ(store_failure_of_text("unexpected reply").kind, port::other);
  EXPECT_TRUE(ports::is_transport(store_failure_of_text("IO connect: refused").kind));
}

// An ACL refusal inside a Function reaches the port's failure with its command named:
// the adapter reads its own library, so no actor needs it.
TEST(FailureCause, TheAdapterNamesTheCommandAFunctionWasRefused) {
  const std::string_view library = telemetry::gateway_library_source();
  std::size_t line = 1;
  for (std::size_t i = 0; i < library.find("redis.call('TIME')"); ++i)
    if (library[i] == '\n') ++line;
  const ports::store_failure failed = store_failure_of(
      failure_kind::no_permission,
      "ERR The user executing the script can't run this command or subcommand script: "
      "tgw_persist_batch, on @user_function:" +
          std::to_string(line) + ".",
      library);
  EXPECT_EQ(failed.kind, ports::failure_kind::no_permission);
  EXPECT_NE(failed.cause.fix.find("needs +time"), std::string::npos) << failed.text();
}

}  // namespace
}  // namespace tgw::infra::redis
