#include "infra/commands/redis_command_store.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <span>
#include <thread>

#include "infra/redis/key_slot.hpp"
#include "tests/infra/commands/command_test_fixture.hpp"

namespace tgw::infra::commands::test {
namespace {

constexpr const char* imei1 = "356307042441013";
constexpr const char* imei2 = "356307042441014";

class CommandStore : public CommandFixture {};

TEST_F(CommandStore, PublishToALiveOwnerAppendsToItsStream) {
  place(imei1, "A");
  auto a = store("A");
  auto pub = publisher();
  const auto sent = pub.publish(imei1, "getinfo", 14, 300s, false, error);
  ASSERT_TRUE(sent) << error;
  EXPECT_EQ(sent->status, "sent");
  EXPECT_EQ(sent->owner, "A");
  EXPECT_EQ(sent->last_response_id, "0-0");
  EXPECT_EQ(sent->command_id.size(), 32U);
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got) << failed.text();
  ASSERT_EQ(got->size(), 1U);
  const command_entry& e = got->front();
  EXPECT_EQ(e.entry_id, sent->entry_id);
  EXPECT_EQ(e.command_id, sent->command_id);
  EXPECT_EQ(e.target_imei, imei1);
  EXPECT_EQ(e.codec, 14);
  EXPECT_EQ(e.payload, "getinfo");
  EXPECT_GT(e.expires_at, 0);
  EXPECT_EQ(e.malformed, "");
}

// A reader waiting for new entries gets a command whatever shard its device is in (on
// a cluster it waits on its wake stream, which the publisher adds to), and answers it
// into that device's shard.
TEST_F(CommandStore, AWaitingReaderGetsCommandsForDevicesOfEveryShard) {
  auto a = store("A");
  ASSERT_TRUE(a.ensure_group(failed)) << failed.text();
  std::set<std::uint32_t> shards_used;
  for (int d = 0; d < 8; ++d) {
    const std::string imei = std::to_string(356307042441100 + d);
    place(imei, "A");
    shards_used.insert(shards().shard_of(imei));
    std::optional<std::vector<command_entry>> got;
    ports::store_failure read_error;
    std::thread reader([&] {
      // Until it arrives: a round may end empty at its block time.
      for (int round = 0; round < 10 && (!got || got->empty()); ++round)
        got = a.read_new(2000ms, 16, read_error);
    });
    std::this_thread::sleep_for(50ms);  // the reader is waiting
    const auto sent = publisher().publish(imei, "getinfo", 12, 300s, false, error);
    reader.join();
    ASSERT_TRUE(sent && sent->status == "sent") << error;
    ASSERT_TRUE(got && got->size() == 1) << read_error.text();
    EXPECT_EQ(got->front().command_id, sent->command_id);
    EXPECT_EQ(got->front().shard, shards().shard_of(imei));
    ASSERT_TRUE(a.resolve(got->front(), {"responded", "ok", ""}, failed)) << failed.text();
    const auto answered = entries(responses_of(imei));
    ASSERT_FALSE(answered.empty());
    EXPECT_EQ(answered.back().at("command_id"), sent->command_id);
    if (backend.on_cluster()) {
      EXPECT_EQ(xlen(keys::wake("A")), 1);  // one entry, kept short
    }
  }
  if (backend.on_cluster()) {
    EXPECT_GT(shards_used.size(), 4U);
  }
  EXPECT_EQ(pending("A"), 0);
}

// On a cluster, a shard whose slot has no master (CLUSTERDOWN) fails alone: a reader
// still gets the commands of the other shards.
TEST_F(CommandStore, AShardWithoutAMasterDoesNotHoldUpTheOthersCommands) {
  if (!backend.on_cluster()) GTEST_SKIP() << "cluster only";
  const std::string lost = "356307042441100", served = "356307042441101";
  ASSERT_NE(prefix(lost), prefix(served));
  place(served, "A");
  auto a = store("A");
  ASSERT_TRUE(a.ensure_group(failed)) << failed.text();
  tgw::test::unserved_slot no_master(backend.cluster(), redis::key_slot(prefix(lost)));
  ASSERT_TRUE(no_master.taken());
  const auto sent = publisher().publish(served, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(sent && sent->status == "sent") << error;
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got) << failed.text();
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front().command_id, sent->command_id);
}

TEST_F(CommandStore, PublishToAnOwnerWithoutHeartbeatIsOffline) {
  place(imei1, "B", false);
  auto pub = publisher();
  const auto r = pub.publish(imei1, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, "offline");
  EXPECT_EQ(r->owner, "B");
  EXPECT_FALSE(has_streams("B"));
  const auto unknown = pub.publish(imei2, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(unknown) << error;
  EXPECT_EQ(unknown->status, "offline");
  EXPECT_EQ(unknown->owner, "");
}

TEST_F(CommandStore, PublishNeverRecreatesAMissingStream) {
  place(imei1, "A");
  delete_streams("A");  // removed by a janitor, heartbeat not yet gone
  auto pub = publisher();
  const auto r = pub.publish(imei1, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, "offline");
  EXPECT_FALSE(has_streams("A"));
}

TEST_F(CommandStore, PublishQueuesForAnOfflineDeviceWhenAsked) {
  auto pub = publisher();
  const auto r = pub.publish(imei1, "getinfo", 12, 300s, true, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, "queued");
  EXPECT_EQ(redis.command({"LLEN", offline(imei1)}).integer, 1);
  EXPECT_TRUE(responses().empty());
}

TEST_F(CommandStore, PublishReportsTheNewestResponseId) {
  place(imei1, "A");
  const std::string newest =
      redis.command({"XADD", responses_of(imei1), "*", "command_id", "x", "status", "failed"}).text;
  auto pub = publisher();
  const auto r = pub.publish(imei1, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->last_response_id, newest);
}

TEST_F(CommandStore, ResolvePublishesJournalsAcksAndDeletesOnce) {
  place(imei1, "A");
  auto a = store("A");
  ASSERT_TRUE(publisher().publish(imei1, "getinfo", 12, 300s, false, error)) << error;
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got && got->size() == 1) << failed.text();
  EXPECT_EQ(pending("A"), 1);
  ASSERT_TRUE(a.resolve(got->front(), {"responded", "FW:1.2", ""}, failed)) << failed.text();
  auto rs = responses();
  ASSERT_EQ(rs.size(), 1U);
  EXPECT_EQ(rs[0]["command_id"], got->front().command_id);
  EXPECT_EQ(rs[0]["status"], "responded");
  EXPECT_EQ(rs[0]["response"], "FW:1.2");
  EXPECT_EQ(rs[0]["imei"], imei1);
  EXPECT_EQ(rs[0].count("failure_reason"), 0U);
  EXPECT_FALSE(rs[0]["responded_at"].empty());
  EXPECT_EQ(pending("A"), 0);
  EXPECT_EQ(xlen(outbound("A", imei1)), 0);
  // The publish journaled the command (command_published), the resolve its outcome.
  const auto journal = entries(this->journal(imei1));
  ASSERT_EQ(journal.size(), 2U);
  EXPECT_EQ(journal[0].at("type"), "command_published");
  EXPECT_EQ(journal[1].at("type"), "command_resolved");
  EXPECT_EQ(journal[1].at("command_id"), got->front().command_id);
  EXPECT_EQ(journal[1].at("status"), "responded");
  EXPECT_EQ(journal[1].at("instance"), "A");
  EXPECT_EQ(journal[1].at("at_ms"), rs[0]["responded_at"]);

  // A retry after a crash that hid the first reply: nothing is published again.
  ASSERT_TRUE(a.resolve(got->front(), {"failed", "", "socket_closed"}, failed)) << failed.text();
  EXPECT_EQ(responses().size(), 1U);
  EXPECT_EQ(entries(this->journal(imei1)).size(), 2U);
}

// With require_replicas, a batch no replica confirmed reports failure for every call
// in it, so the responder retries; the retry publishes nothing twice.
TEST_F(CommandStore, AResolveNoReplicaConfirmedIsReportedForARetry) {
  place(imei1, "A");
  auto a = store("A");
  // The single node has no replica; each cluster master has one, so ask for one more.
  const int replicas = backend.on_cluster() ? 2 : 1;
  // How many confirmed within the wait depends on how busy the box is; that it fell
  // short of `replicas` does not.
  // A replica shortfall is its own cause, apart from the store being unreachable.
  const auto short_of = [&](const ports::store_failure& f) {
    const std::string& e = f.cause.detail;
    return f.cause.label == "replicas" && e.starts_with("replicas: WAIT confirmed ") &&
           e.ends_with(" of " + std::to_string(replicas));
  };
  a.require_replicas(replicas, 100ms);
  ASSERT_TRUE(publisher().publish(imei1, "getinfo", 12, 300s, false, error)) << error;
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got && got->size() == 1) << failed.text();
  const auto batch = {a.resolve_command(got->front(), {"responded", "FW:1.2", ""}, 1000)};
  const auto errors = a.run_batch(batch);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_TRUE(short_of(errors[0])) << errors[0].text();
  const ports::store_failure again = a.run_batch(batch)[0];
  EXPECT_TRUE(short_of(again)) << again.text();
  // The typed batch the responder runs fails the same way.
  const std::pair<command_entry, resolution> outcome{got->front(), {"responded", "FW:1.2", ""}};
  const auto typed = a.resolve_all(std::span(&outcome, 1), 1000);
  ASSERT_EQ(typed.size(), 1U);
  EXPECT_TRUE(short_of(typed[0])) << typed[0].text();
  EXPECT_EQ(responses().size(), 1U);
  a.require_replicas(0, 100ms);
  EXPECT_FALSE(a.run_batch(batch)[0].failed());
}

// What a failover to a replica that never had the command leaves: the entry and its
// marker gone, while the device answered the instance that delivered it. The answer is
// published all the same, once; the publisher's settle then finds it answered.
TEST_F(CommandStore, ADeviceAnswerIsPublishedEvenWhenAFailoverLostTheCommand) {
  place(imei1, "A");
  auto a = store("A");
  auto pub = publisher();
  const auto sent = pub.publish(imei1, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(sent) << error;
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got && got->size() == 1) << failed.text();
  redis.command({"XDEL", outbound("A", imei1), got->front().entry_id});
  redis.command({"DEL", keys::marker(sent->command_id, prefix(imei1))});
  ASSERT_TRUE(a.resolve(got->front(), {"responded", "FW:1.2", ""}, failed)) << failed.text();
  auto rs = responses();
  ASSERT_EQ(rs.size(), 1U);
  EXPECT_EQ(rs[0]["status"], "responded");
  EXPECT_EQ(rs[0]["imei"], imei1);
  ASSERT_TRUE(a.resolve(got->front(), {"responded", "FW:1.2", ""}, failed)) << failed.text();
  EXPECT_EQ(responses().size(), 1U);
  EXPECT_EQ(pub.settle(imei1, sent->command_id, "store_failover", error), "answered");
  EXPECT_EQ(responses().size(), 1U);
}

// A publish the store lost, and no device answered: the publisher ends it, once.
TEST_F(CommandStore, SettleEndsALostCommandOnceAndLeavesAKnownOneAlone) {
  place(imei1, "A");
  auto pub = publisher();
  const auto sent = pub.publish(imei1, "getinfo", 12, 300s, false, error);
  ASSERT_TRUE(sent) << error;
  EXPECT_EQ(pub.settle(imei1, sent->command_id, "store_failover", error), "published");
  EXPECT_TRUE(responses().empty());
  redis.command({"DEL", keys::marker(sent->command_id, prefix(imei1))});
  EXPECT_EQ(pub.settle(imei1, sent->command_id, "store_failover", error), "settled");
  EXPECT_EQ(pub.settle(imei1, sent->command_id, "store_failover", error), "answered");
  auto rs = responses();
  ASSERT_EQ(rs.size(), 1U);
  EXPECT_EQ(rs[0]["status"], "failed");
  EXPECT_EQ(rs[0]["failure_reason"], "store_failover");
  EXPECT_EQ(rs[0]["command_id"], sent->command_id);
  // The command is still in the stream (it was never lost on this server): once
  // answered, the instance that reads it does not deliver it.
  auto a = store("A");
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got && got->size() == 1) << failed.text();
  std::vector<redis::value> replies;
  const auto errors = a.run_batch({a.dispatched_command(got->front(), 1000)}, &replies);
  EXPECT_FALSE(errors[0].failed()) << errors[0].text();
  EXPECT_EQ(replies[0].as_int(), -1);
  const command_entry* entry = &got->front();
  const auto typed = a.dispatched_all(std::span(&entry, 1), 1000);
  ASSERT_EQ(typed.size(), 1U);
  EXPECT_EQ(typed[0].status, dispatch_status::answered_already);
  ASSERT_TRUE(a.resolve(got->front(), {"responded", "late", ""}, failed)) << failed.text();
  EXPECT_EQ(responses().size(), 1U);
  EXPECT_EQ(xlen(outbound("A", imei1)), 0);
}

// A publisher whose connection dropped before the reply publishes again with the same
// id: one entry, and the first publish's decision.
TEST_F(CommandStore, APublishRepeatedWithItsIdChangesNothing) {
  place(imei1, "A");
  auto pub = publisher();
  const std::string id = new_command_id();
  const auto first = pub.publish(imei1, "getinfo", 12, 300s, false, id, error);
  ASSERT_TRUE(first) << error;
  const auto again = pub.publish(imei1, "getinfo", 12, 300s, false, id, error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(again->status, "sent");
  EXPECT_EQ(again->owner, first->owner);
  EXPECT_EQ(again->entry_id, first->entry_id);
  EXPECT_EQ(xlen(outbound("A", imei1)), 1);
  auto a = store("A");
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got && got->size() == 1) << failed.text();
  ASSERT_TRUE(a.resolve(got->front(), {"responded", "ok", ""}, failed)) << failed.text();
  const auto answered = pub.publish(imei1, "getinfo", 12, 300s, false, id, error);
  ASSERT_TRUE(answered) << error;
  EXPECT_EQ(answered->status, "answered");
  EXPECT_EQ(xlen(outbound("A", imei1)), 0);
  EXPECT_EQ(responses().size(), 1U);
}

TEST_F(CommandStore, DispatchedJournalsTheEvent) {
  auto a = store("A");
  command_entry e;
  e.command_id = "c1";
  e.target_imei = imei1;
  e.codec = 12;
  ASSERT_TRUE(a.dispatched(e, failed)) << failed.text();
  const auto journal = entries(this->journal(imei1));
  ASSERT_EQ(journal.size(), 1U);
  EXPECT_EQ(journal[0].at("type"), "command_dispatched");
  EXPECT_EQ(journal[0].at("command_id"), "c1");
  EXPECT_EQ(journal[0].at("codec"), "12");
  EXPECT_EQ(journal[0].at("instance"), "A");
}

TEST_F(CommandStore, PendingEntriesAreReadAgainAfterARestart) {
  place(imei1, "A");
  {
    auto before = store("A");
    for (int i = 0; i < 150; ++i)
      add_command("A", std::string("c").append(std::to_string(i)), imei1);
    const auto got = before.read_new(100ms, 200, failed);
    ASSERT_TRUE(got) << failed.text();
    ASSERT_EQ(got->size(), 150U);
    ASSERT_TRUE(before.resolve((*got)[3], {"responded", "ok", ""}, failed));
  }  // "crash": delivered, never acknowledged
  add_command("A", "fresh", imei1);
  auto after = store("A");
  const auto again = after.read_pending(failed);
  ASSERT_TRUE(again) << failed.text();
  ASSERT_EQ(again->size(), 149U);  // more than one page
  EXPECT_EQ((*again)[0].command_id, "c0");
  EXPECT_EQ((*again)[3].command_id, "c4");
  const auto fresh = after.read_new(100ms, 16, failed);
  ASSERT_TRUE(fresh) << failed.text();
  ASSERT_EQ(fresh->size(), 1U);
  EXPECT_EQ(fresh->front().command_id, "fresh");
}

TEST_F(CommandStore, ADeletedGroupIsRecreated) {
  auto a = store("A");
  ASSERT_TRUE(a.ensure_group(failed)) << failed.text();
  ASSERT_TRUE(a.ensure_group(failed)) << failed.text();  // BUSYGROUP is fine
  delete_streams("A");
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got) << failed.text();
  EXPECT_TRUE(got->empty());
  add_command("A", "after", imei1);
  const auto next = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(next) << failed.text();
  ASSERT_EQ(next->size(), 1U);
  EXPECT_EQ(next->front().command_id, "after");
  delete_streams("A");
  const auto none = a.read_pending(failed);
  ASSERT_TRUE(none) << failed.text();
  EXPECT_TRUE(none->empty());
}

TEST_F(CommandStore, MalformedEntriesNameTheirProblem) {
  auto a = store("A");
  ASSERT_TRUE(a.ensure_group(failed));
  const std::string big(513, 'x');
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"target_imei", imei1, "codec", "12", "payload", "p"}, "missing field command_id"},
      {{"command_id", "c", "codec", "12", "payload", "p"}, "missing field target_imei"},
      {{"command_id", "c", "target_imei", "12345", "codec", "12", "payload", "p"},
       "bad target_imei (not 15 or 16 digits)"},
      {{"command_id", "c", "target_imei", "35630704244101345", "codec", "12", "payload", "p"},
       "bad target_imei (not 15 or 16 digits)"},
      {{"command_id", "c", "target_imei", imei1, "payload", "p"}, "missing field codec"},
      {{"command_id", "c", "target_imei", imei1, "codec", "13", "payload", "p"}, "bad codec 13"},
      {{"command_id", "c", "target_imei", imei1, "codec", "12"}, "missing field payload"},
      {{"command_id", "c", "target_imei", imei1, "codec", "12", "payload", big},
       "payload over 512 bytes"},
      {{"command_id", "c", "target_imei", imei1, "codec", "12", "payload", "p", "expires_at",
        "soon"},
       "bad expires_at soon"},
      {{"command_id", "c", "target_imei", imei1, "codec", "12", "payload",
        "getinfo\r\nsetparam 2001:evil"},
       "control character 0x0D at byte 7 of the payload (refused unless the gateway runs with "
       "--allow-command-control-chars)"},
      {{"command_id", "c", "target_imei", imei1, "codec", "14", "payload", "p"}, ""},
      // An IMEISV's 16 digits are an IMEI as the handshake takes it.
      {{"command_id", "c", "target_imei", "3563070424410134", "codec", "14", "payload", "p"}, ""},
  };
  // All in one stream, so they are read in this order.
  for (const auto& [fields, reason] : cases) add_raw("A", fields, imei1);
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got) << failed.text();
  ASSERT_EQ(got->size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ((*got)[i].malformed, cases[i].second) << i;
    EXPECT_FALSE((*got)[i].entry_id.empty());
  }
  EXPECT_EQ(got->back().expires_at, 0);  // missing: never expires
  EXPECT_TRUE((*got)[9].control_characters);
  EXPECT_FALSE((*got)[8].control_characters);
  // A malformed entry is answered and acknowledged like any other.
  ASSERT_TRUE(a.resolve((*got)[1], {"failed", "", "malformed: " + (*got)[1].malformed}, failed));
  EXPECT_EQ(responses().size(), 1U);
  EXPECT_EQ(pending("A"), static_cast<std::int64_t>(cases.size() - 1));
}

// An instance started with --allow-command-control-chars delivers such a text as it is.
TEST(CommandEntry, ControlCharactersPassOnlyWhenAllowed) {
  const std::vector<std::string> fields = {"command_id", "c",  "target_imei", "356307042441013",
                                           "codec",      "12", "payload",     "getinfo\r\n"};
  EXPECT_TRUE(ports::parse_command_entry("1-0", fields, true, 512).control_characters);
  const auto allowed = ports::parse_command_entry("1-0", fields, true, 512, true);
  EXPECT_EQ(allowed.malformed, "");
  EXPECT_EQ(allowed.payload, "getinfo\r\n");
}

TEST_F(CommandStore, APendingEntryWhoseBodyWasDeletedIsMalformedAndCanBeAcked) {
  auto a = store("A");
  ASSERT_TRUE(a.ensure_group(failed));
  const std::string id = add_command("A", "c1", imei1);
  ASSERT_TRUE(a.read_new(100ms, 16, failed));
  redis.command({"XDEL", outbound("A", imei1), id});
  const auto again = a.read_pending(failed);
  ASSERT_TRUE(again) << failed.text();
  ASSERT_EQ(again->size(), 1U);
  EXPECT_EQ(again->front().entry_id, id);
  EXPECT_EQ(again->front().malformed, "entry body deleted");
  ASSERT_TRUE(a.resolve(again->front(), {"failed", "", "malformed"}, failed)) << failed.text();
  EXPECT_EQ(pending("A"), 0);
  EXPECT_TRUE(responses().empty());  // nothing is known to answer
}

TEST_F(CommandStore, OrphansGetOneOutcomeEachAndTheStreamGoes) {
  place("356307042441001", "A");         // re-routed to A
  place("356307042441002", "B", false);  // owner dead too
  place("356307042441003", "D", false);  // still on the dead instance
  create_groups("D");
  add_command("D", "expired", "356307042441001", "1");
  add_command("D", "moves", "356307042441001");
  add_command("D", "owner-dead", "356307042441002");
  add_command("D", "no-owner", "356307042441009");
  add_command("D", "still-dead", "356307042441003");
  const std::string done = add_command("D", "resolved", "356307042441003");
  add_raw("D", {"command_id", "broken", "target_imei", "356307042441003", "codec", "99", "payload",
                "p"});
  // Read (so some are pending) and resolve one before dying.
  auto d = store("D");
  const auto read = d.read_new(100ms, 3, failed);
  // Up to 3 from each shard's stream.
  ASSERT_TRUE(read && read->size() >= 3) << failed.text();
  command_entry resolved;
  resolved.entry_id = done;
  resolved.command_id = "resolved";
  resolved.target_imei = "356307042441003";
  resolved.shard = shards().shard_of(resolved.target_imei);
  ASSERT_TRUE(d.resolve(resolved, {"responded", "ok", ""}, failed)) << failed.text();

  auto janitor = store("J");
  const auto counts = janitor.adopt_orphans("D", failed);
  ASSERT_TRUE(counts) << failed.text();
  EXPECT_EQ(counts->handled, 6U);
  EXPECT_EQ(counts->rerouted, 1U);
  EXPECT_EQ(counts->failed, 5U);
  EXPECT_FALSE(has_streams("D"));

  std::map<std::string, std::string> reason;
  for (auto& r : responses()) {
    EXPECT_EQ(reason.count(r["command_id"]), 0U) << "answered twice: " << r["command_id"];
    reason[r["command_id"]] = r["status"] == "failed" ? r["failure_reason"] : r["status"];
  }
  EXPECT_EQ(reason["expired"], "expired_before_delivery");
  EXPECT_EQ(reason.count("moves"), 0U);
  EXPECT_EQ(reason["owner-dead"], "instance_lost");
  EXPECT_EQ(reason["no-owner"], "instance_lost");
  EXPECT_EQ(reason["still-dead"], "instance_lost");
  EXPECT_EQ(reason["resolved"], "responded");
  EXPECT_EQ(reason["broken"], "malformed: bad codec 99");
  EXPECT_EQ(reason.size(), 6U);

  const auto moved = entries(outbound("A", "356307042441001"));
  ASSERT_EQ(moved.size(), 1U);
  EXPECT_EQ(moved[0].at("command_id"), "moves");
  EXPECT_EQ(moved[0].at("target_imei"), "356307042441001");
  EXPECT_EQ(moved[0].at("payload"), "getinfo");
  const auto journal = entries(this->journal("356307042441002"));
  ASSERT_EQ(journal.size(), 1U);
  EXPECT_EQ(journal[0].at("type"), "command_resolved");
  EXPECT_EQ(journal[0].at("failure_reason"), "instance_lost");

  // Adopting again finds nothing and answers nothing.
  const auto again = janitor.adopt_orphans("D", failed);
  ASSERT_TRUE(again) << failed.text();
  EXPECT_EQ(again->handled, 0U);
  EXPECT_EQ(responses().size(), 6U);
}

// A re-routed copy whose original its device answered, left in a stream whose
// instance died too: dropped, not answered a second time.
TEST_F(CommandStore, AnOrphanAnsweredAlreadyIsDroppedWithoutASecondResponse) {
  place("356307042441003", "D", false);
  create_groups("D");
  add_command("D", "answered-copy", "356307042441003");
  redis.command({"SET", keys::marker("answered-copy", prefix("356307042441003")), "a"});
  auto janitor = store("J");
  const auto counts = janitor.adopt_orphans("D", failed);
  ASSERT_TRUE(counts) << failed.text();
  EXPECT_EQ(counts->handled, 1U);
  EXPECT_EQ(counts->failed, 0U);
  EXPECT_EQ(counts->rerouted, 0U);
  EXPECT_TRUE(responses().empty());
  EXPECT_FALSE(has_streams("D"));
}

TEST_F(CommandStore, TwoJanitorsAdoptingTogetherAnswerEachEntryOnce) {
  constexpr int n = 1000;
  for (int i = 0; i < n; ++i) add_command("D", std::string("c").append(std::to_string(i)), imei1);
  ports::command_store::orphan_counts first;
  ports::command_store::orphan_counts second;
  ports::store_failure e1;
  ports::store_failure e2;
  std::thread t1([&] { first = *store("J1").adopt_orphans("D", e1); });
  std::thread t2([&] { second = *store("J2").adopt_orphans("D", e2); });
  t1.join();
  t2.join();
  EXPECT_EQ(first.handled + second.handled, static_cast<std::size_t>(n));
  EXPECT_EQ(first.failed + second.failed, static_cast<std::size_t>(n));
  std::set<std::string> ids;
  for (auto& r : responses()) ids.insert(r["command_id"]);
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(static_cast<int>(responses().size()), n);
  EXPECT_FALSE(has_streams("D"));
}

TEST_F(CommandStore, DrainOfflineKeepsOrderAndAnswersExpiredOnes) {
  auto pub = publisher();
  const auto c1 = pub.publish(imei1, "first", 12, 300s, true, error);
  ASSERT_TRUE(c1) << error;
  redis.command({"RPUSH", offline(imei1),
                 R"({"command_id":"old","target_imei":"356307042441013","codec":"12",)"
                 R"("payload":"late","expires_at":"1"})"});
  const auto c3 = pub.publish(imei1, "third", 14, 0s, true, error);
  ASSERT_TRUE(c3) << error;
  place(imei1, "A");
  auto a = store("A");
  const auto moved = a.drain_offline(imei1, failed);
  ASSERT_TRUE(moved) << failed.text();
  EXPECT_EQ(*moved, 2U);
  EXPECT_FALSE(exists(offline(imei1)));
  const auto got = a.read_new(100ms, 16, failed);
  ASSERT_TRUE(got) << failed.text();
  ASSERT_EQ(got->size(), 2U);
  EXPECT_EQ((*got)[0].command_id, c1->command_id);
  EXPECT_EQ((*got)[0].payload, "first");
  EXPECT_EQ((*got)[1].command_id, c3->command_id);
  EXPECT_EQ((*got)[1].codec, 14);
  EXPECT_EQ((*got)[1].expires_at, 0);
  EXPECT_EQ((*got)[1].malformed, "");
  const auto rs = responses();
  ASSERT_EQ(rs.size(), 1U);
  EXPECT_EQ(rs[0].at("command_id"), "old");
  EXPECT_EQ(rs[0].at("failure_reason"), "expired_before_delivery");
  const auto nothing = a.drain_offline(imei1, failed);
  ASSERT_TRUE(nothing) << failed.text();
  EXPECT_EQ(*nothing, 0U);
}

TEST_F(CommandStore, RedisDownGivesErrorsAndRecoveryReloadsTheLibrary) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  tgw::test::redis_server& server = *backend.server();
  place(imei1, "A");
  auto a = store("A");
  auto pub = publisher();
  ASSERT_TRUE(pub.publish(imei1, "x", 12, 300s, false, error)) << error;
  server.stop();
  EXPECT_FALSE(pub.publish(imei1, "x", 12, 300s, false, error));
  EXPECT_FALSE(error.empty());
  error.clear();
  EXPECT_FALSE(a.read_new(100ms, 16, failed));
  // A typed failure: the actors branch on the kind, never on the words.
  EXPECT_EQ(failed.kind, ports::failure_kind::unreachable) << failed.text();
  EXPECT_FALSE(a.read_pending(failed));
  EXPECT_FALSE(a.ensure_group(failed));
  EXPECT_FALSE(a.resolve(command_entry{}, {"failed", "", "x"}, failed));
  EXPECT_FALSE(a.drain_offline(imei1, failed));
  EXPECT_FALSE(a.adopt_orphans("D", failed));
  EXPECT_FALSE(pub.wait_response(imei1, "c", "0-0", 100ms, error));
  EXPECT_FALSE(error.empty());
  server.start();           // empty: no functions loaded any more
  redis.command({"PING"});  // the fixture's own connection fails once, then reconnects
  place(imei1, "A");
  error.clear();
  const auto r = pub.publish(imei1, "x", 12, 300s, false, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, "sent");
  ASSERT_TRUE(a.drain_offline(imei1, failed)) << failed.text();
}

}  // namespace
}  // namespace tgw::infra::commands::test
