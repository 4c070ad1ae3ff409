// The command reader's, responder's and janitor's decisions, on CAF's deterministic
// scheduler and an in-memory command store (tests/support/fake_command_store.hpp):
// which entries are answered instead of delivered, that a delivered one is journaled
// first and reaches its session once across an outage, that the responder keeps and
// retries what the store refused, in order, and that the janitor adopts only a dead
// instance's stream. What Redis itself does with these calls is tested against a
// redis-server in tests/infra/commands.
#include <gtest/gtest.h>
#include <caf/all.hpp>

#include "actors/commands/command_reader.hpp"
#include "actors/commands/command_responder.hpp"
#include "actors/gateway/session_directory.hpp"
#include "actors/registry/registry_actor.hpp"
#include "tests/support/deterministic_actors.hpp"
#include "tests/support/fake_command_store.hpp"

namespace tgw::actors::commands {
namespace {

using namespace std::chrono_literals;
using gateway::session_actor;
using gateway::session_directory;
using ports::command_entry;
using ports::resolution;

constexpr const char* imei_1 = "356307042441013";
constexpr const char* imei_2 = "356307042441021";

// Stands in for a device session: records the commands the reader hands it.
session_actor::behavior_type recording_session(std::shared_ptr<std::vector<command_entry>> got) {
  return {
      [](gateway::frame_atom, std::uint8_t, std::uint8_t, const std::vector<std::uint8_t>&) {},
      [](gateway::persisted_atom, const ports::write_outcome&) {},
      [](gateway::revoke_atom) {},
      [got](command_atom, const command_entry& e) { got->push_back(e); },
      [](gateway::closed_atom, const std::string&) {},
  };
}

class CommandLogic : public ::testing::Test, protected test::deterministic_actors {
 protected:
  ~CommandLogic() override {
    for (const auto& a : actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
  }
  std::shared_ptr<test::fake_command_store> store(const std::string& instance) {
    return std::make_shared<test::fake_command_store>(world, instance);
  }
  /// A session of `imei` on this instance; what it gets lands in the returned list.
  std::shared_ptr<std::vector<command_entry>> connect(const char* imei) {
    auto got = std::make_shared<std::vector<command_entry>>();
    const session_actor session = sys.spawn(recording_session, got);
    actors.push_back(caf::actor_cast<caf::actor>(session));
    directory->attach(imei, session);
    return got;
  }
  void start_reader() {
    reader = sys.spawn(command_reader, reader_config{}, store("A"),
                       std::shared_ptr<const session_lookup>(directory), counters);
    actors.push_back(caf::actor_cast<caf::actor>(reader));
  }
  // The reader reads again at once after each round, so its job never runs out: run
  // until it made `n` more read_new calls, or until it waits for its backoff, then
  // everything else that is due.
  void read_rounds(std::size_t n) {
    const std::size_t target = world->reads + n;
    while (world->reads < target && sched.try_run_once()) {
    }
    auto* job = dynamic_cast<caf::resumable*>(caf::actor_cast<caf::abstract_actor*>(reader));
    sched.run_jobs_filtered([job](caf::resumable* next) { return next != job; });
  }
  command_responder_actor start_responder() {
    const auto responder = sys.spawn(command_responder, responder_config{}, store("A"), counters);
    actors.push_back(caf::actor_cast<caf::actor>(responder));
    sched.run();
    return responder;
  }
  /// The responder's answer to sync_atom: true when nothing is left unpublished.
  bool synced(const command_responder_actor& responder) {
    caf::scoped_actor self{sys};
    auto answer = self->request(responder, caf::infinite, sync_atom::value);
    sched.run();
    bool result = false;
    answer.receive([&](bool ok) { result = ok; },
                   [&](const caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return result;
  }
  /// The entries `instance` has read (delivered to it, now pending), as the reader
  /// would have handed them to sessions.
  std::vector<command_entry> read_by(const std::string& instance) {
    ports::store_failure error;
    auto got = store(instance)->read_new(0ms, 100, error);
    EXPECT_TRUE(got) << error.text();
    return got ? *got : std::vector<command_entry>{};
  }
  const test::fake_commands::response* response_to(const std::string& command_id) const {
    for (const auto& r : world->responses)
      if (r.command_id == command_id) return &r;
    return nullptr;
  }

  std::shared_ptr<test::fake_commands> world = std::make_shared<test::fake_commands>();
  std::shared_ptr<session_directory> directory = std::make_shared<session_directory>();
  std::shared_ptr<infra::metrics::gateway_counters> counters =
      std::make_shared<infra::metrics::gateway_counters>();
  command_reader_actor reader;
  std::vector<caf::actor> actors;
};

TEST_F(CommandLogic, EntriesNoSessionCanTakeAreAnsweredAndAcknowledged) {
  const auto got = connect(imei_1);
  world->append("A", {"command_id", "no-codec", "target_imei", imei_1, "payload", "getinfo"});
  world->send_to("A", "expired", imei_1, 1);
  world->send_to("A", "nobody", imei_2);
  start_reader();
  read_rounds(1);

  EXPECT_TRUE(got->empty());
  ASSERT_EQ(world->responses.size(), 3U);
  for (const auto& [id, reason] :
       {std::pair{"no-codec", "malformed: missing field codec"},
        std::pair{"expired", "expired_before_delivery"}, std::pair{"nobody", "socket_closed"}}) {
    const auto* r = response_to(id);
    ASSERT_NE(r, nullptr) << id;
    EXPECT_EQ(r->status, "failed") << id;
    EXPECT_EQ(r->failure_reason, reason) << id;
    EXPECT_EQ(world->journaled(id, "command_dispatched"), 0U) << id;
  }
  EXPECT_EQ(world->length("A"), 0U);
  EXPECT_EQ(world->pending("A"), 0U);
  EXPECT_EQ(counters->commands_refused.load(), 3U);
}

TEST_F(CommandLogic, ADeliverableCommandIsJournaledThenReachesItsSession) {
  const auto got = connect(imei_1);
  const std::string entry_id = world->send_to("A", "c1", imei_1);
  sched.run();  // the session waits for messages: the reader's enqueues it
  start_reader();
  std::size_t journaled_when_sent = 0;
  sched.after_next_enqueue(
      [&] { journaled_when_sent = world->journaled("c1", "command_dispatched"); });
  read_rounds(1);

  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front().entry_id, entry_id);
  EXPECT_EQ(got->front().payload, "getinfo");
  EXPECT_EQ(journaled_when_sent, 1U) << "in the journal before the session has it";
  EXPECT_EQ(world->journaled("c1", "command_dispatched"), 1U);
  EXPECT_TRUE(world->responses.empty());
  EXPECT_EQ(world->pending("A"), 1U) << "pending until its session resolves it";
}

TEST_F(CommandLogic, ACopyAnsweredAlreadyIsDroppedNotDelivered) {
  const auto got = connect(imei_1);
  world->send_to("A", "c1", imei_1);
  world->markers["c1"] = 'a';  // a re-routed copy whose original its device answered
  start_reader();
  read_rounds(1);

  EXPECT_TRUE(got->empty());
  EXPECT_TRUE(world->responses.empty()) << "answered once, not again";
  EXPECT_EQ(world->journaled("c1", "command_dispatched"), 0U);
  EXPECT_EQ(world->length("A"), 0U);
  EXPECT_EQ(world->pending("A"), 0U);
}

TEST_F(CommandLogic, ACommandWhoseDispatchEventFailedIsDeliveredAllTheSame) {
  const auto got = connect(imei_1);
  world->send_to("A", "c1", imei_1);
  world->failing = {"dispatched_all"};  // the read is served, the journal write fails
  start_reader();
  read_rounds(1);

  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front().command_id, "c1");
  EXPECT_EQ(world->journaled("c1", "command_dispatched"), 0U);
  EXPECT_TRUE(world->responses.empty());
}

TEST_F(CommandLogic, AfterAnOutageThePendingEntriesAreReReadAndNoneIsDeliveredTwice) {
  const auto got = connect(imei_1);
  world->send_to("A", "c1", imei_1);
  start_reader();
  read_rounds(1);
  ASSERT_EQ(got->size(), 1U);

  world->send_to("A", "c2", imei_1);
  world->down = true;
  read_rounds(1);  // fails: the reader backs off
  EXPECT_EQ(got->size(), 1U);
  EXPECT_FALSE(sched.has_job());

  // The failed read had been served: c2 is pending, and the reader never saw it.
  world->down = false;
  ASSERT_EQ(read_by("A").size(), 1U);
  EXPECT_EQ(world->pending("A"), 2U);
  sched.advance_time(reader_config{}.max_backoff);
  read_rounds(2);

  ASSERT_EQ(got->size(), 2U);
  EXPECT_EQ((*got)[0].command_id, "c1");
  EXPECT_EQ((*got)[1].command_id, "c2");
  EXPECT_EQ(world->journaled("c1", "command_dispatched"), 1U);
  EXPECT_EQ(world->journaled("c2", "command_dispatched"), 1U);
}

TEST_F(CommandLogic, TheResponderKeepsWhatTheStoreRefusedAndPublishesItOnceInOrder) {
  world->send_to("A", "c1", imei_1);
  world->send_to("A", "c2", imei_1);
  world->send_to("A", "c3", imei_2);
  const std::vector<command_entry> read = read_by("A");
  ASSERT_EQ(read.size(), 3U);
  world->down = true;
  const auto responder = start_responder();
  caf::anon_send(responder, resolve_atom::value, read[0], resolution{"responded", "FW:1", ""});
  caf::anon_send(responder, resolve_atom::value, read[1], resolution{"responded", "FW:2", ""});
  sched.run();
  EXPECT_EQ(world->batches, 1U);
  EXPECT_FALSE(synced(responder));

  // Arrives while the others wait: it goes after them.
  caf::anon_send(responder, resolve_atom::value, read[2], resolution{"failed", "", "timeout"});
  sched.run();
  EXPECT_EQ(world->batches, 1U) << "no call while backing off";
  EXPECT_FALSE(synced(responder));

  wait(100ms);  // the first retry, refused too: the next comes after 200 ms
  EXPECT_EQ(world->batches, 2U);
  wait(200ms);  // and the one after that 400 ms later
  EXPECT_EQ(world->batches, 3U);
  world->down = false;
  wait(399ms);
  EXPECT_EQ(world->batches, 3U);
  EXPECT_TRUE(world->responses.empty());
  wait(1ms);
  EXPECT_EQ(world->batches, 4U);
  ASSERT_EQ(world->responses.size(), 3U);
  EXPECT_EQ(world->responses[0].command_id, "c1");
  EXPECT_EQ(world->responses[0].response, "FW:1");
  EXPECT_EQ(world->responses[1].command_id, "c2");
  EXPECT_EQ(world->responses[2].command_id, "c3");
  EXPECT_EQ(world->responses[2].failure_reason, "timeout");
  EXPECT_EQ(world->pending("A"), 0U);
  EXPECT_TRUE(synced(responder));
  EXPECT_EQ(counters->commands_resolved.load(), 3U);
}

TEST_F(CommandLogic, AResolutionTheStoreCouldNotConfirmIsRetriedAndPublishedOnce) {
  world->send_to("A", "c1", imei_1);
  const std::vector<command_entry> read = read_by("A");
  ASSERT_EQ(read.size(), 1U);
  world->unconfirmed = true;  // published, but too few replicas confirmed it
  const auto responder = start_responder();
  caf::anon_send(responder, resolve_atom::value, read[0], resolution{"responded", "FW:1", ""});
  sched.run();
  EXPECT_FALSE(synced(responder));
  world->unconfirmed = false;
  wait(100ms);
  EXPECT_EQ(world->batches, 2U);
  EXPECT_EQ(world->responses_to("c1"), 1U);
  EXPECT_TRUE(synced(responder));
}

TEST_F(CommandLogic, AConnectingDeviceGetsItsOfflineQueueInItsInstancesStream) {
  world->offline[imei_1] = {
      {{"command_id", "late"}, {"codec", "12"}, {"payload", "getinfo"}, {"expires_at", "1"}},
      {{"command_id", "q1"}, {"codec", "12"}, {"payload", "getinfo"}}};
  const auto responder = start_responder();
  caf::anon_send(responder, drain_off_atom::value, std::string(imei_1));
  sched.run();
  EXPECT_EQ(world->length("A"), 1U);
  ASSERT_NE(response_to("late"), nullptr);
  EXPECT_EQ(response_to("late")->failure_reason, "expired_before_delivery");
  EXPECT_FALSE(world->offline.contains(imei_1));
}

TEST_F(CommandLogic, TheJanitorAdoptsADeadInstancesStreamButNeverItsOwn) {
  ports::store_failure error;
  for (const char* instance : {"A", "B", "C"}) ASSERT_TRUE(store(instance)->prepare(error));
  world->registry->heartbeats.insert("C");  // A's heartbeat lapsed, B died
  world->registry->owner[imei_1] = "C";     // device 1 reconnected to C
  world->send_to("B", "to-c", imei_1);
  world->send_to("B", "lost", imei_2);
  world->send_to("A", "own", imei_2);

  const registry::janitor_actor janitor =
      sys.spawn(registry::janitor, registry::janitor_config{},
                std::make_shared<test::fake_registry_store>(world->registry, "A"), counters,
                std::shared_ptr<ports::command_store>(store("A")));
  actors.push_back(caf::actor_cast<caf::actor>(janitor));
  sched.run();
  wait(registry::janitor_config{}.interval);

  EXPECT_FALSE(world->streams.contains("B"));
  EXPECT_FALSE(world->with_streams.contains("B"));
  EXPECT_EQ(world->length("C"), 1U) << "re-routed to the device's live instance";
  ASSERT_NE(response_to("lost"), nullptr);
  EXPECT_EQ(response_to("lost")->failure_reason, "instance_lost");
  EXPECT_EQ(response_to("to-c"), nullptr);
  EXPECT_EQ(world->length("A"), 1U) << "its own stream: its heartbeat lapsed, it is alive";
  EXPECT_EQ(response_to("own"), nullptr);
  EXPECT_TRUE(world->with_streams.contains("A"));
  EXPECT_EQ(counters->commands_adopted.load(), 2U);
}

}  // namespace
}  // namespace tgw::actors::commands
