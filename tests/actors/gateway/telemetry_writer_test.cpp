// The telemetry writer on CAF's deterministic scheduler, with a store that answers as
// scripted: how each kind of write is answered, in what order, and what happens while
// Redis is down.
#include "actors/gateway/telemetry_writer.hpp"

#include <algorithm>
#include <thread>

#include <gtest/gtest.h>
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/gateway/gateway_atoms.hpp"
#include "tests/actors/gateway/session_fakes.hpp"

namespace tgw::actors::gateway {
namespace {

using ports::journal_event;
using ports::packet_job;
using ports::write_op;
using ports::write_outcome;
using test::test_config;
using go_atom = caf::atom_constant<caf::atom("go")>;
constexpr auto unreachable = ports::failure_kind::unreachable;

/// Stores every op; a packet whose fingerprint is "dup" is a resend. With `failing`,
/// every op fails as an unreachable Redis does; the ops of `lost_imei` fail as those of
/// a Redis Cluster master that died while the others answer.
class scripted_store final : public ports::telemetry_store {
 public:
  std::vector<write_outcome> write_batch(const std::vector<write_op>& ops) override {
    batches.push_back(ops);
    std::vector<write_outcome> out;
    for (const write_op& op : ops) {
      const std::string& imei = op.is_packet ? op.packet.imei : op.event.imei;
      if (failing) {
        out.push_back({false, false, 0, "IO error: connection refused"});
        out.back().failure = unreachable;
        out.back().cause = {"connection", "error: connection refused", {}};
        out.back().unreachable = true;
      } else if (batches.size() <= retryable_batches) {
        out.push_back({false, false, 0, "MOVED 1 127.0.0.1:7001"});
        out.back().failure = ports::failure_kind::moved;
        out.back().cause = {"slot_moved", "MOVED 1 127.0.0.1:7001", {}};
        out.back().retryable = true;
      } else if (imei == lost_imei) {
        out.push_back({false, false, 0, lost_text});
        out.back().failure = lost_failure;
        out.back().cause = {std::string(ports::name_of(lost_failure)), lost_text, {}};
      } else if (!op.is_packet)
        out.push_back({true, false, 0, ""});
      else if (op.packet.fingerprint == "dup")
        out.push_back({true, true, 0, ""});
      else
        out.push_back({true, false, static_cast<std::int64_t>(op.packet.records.size()), ""});
    }
    return out;
  }
  std::vector<std::vector<write_op>> batches;
  bool failing = false;
  std::string lost_imei;
  /// How the ops of `lost_imei` fail.
  std::string lost_text = "IO 127.0.0.1:7000: connection refused";
  ports::failure_kind lost_failure = unreachable;
  /// The first this many batches fail as a slot that moved does: safe to send again.
  std::size_t retryable_batches = 0;
};

struct heard {
  std::vector<write_outcome> persisted;  ///< (persisted_atom, outcome) messages.
  std::vector<write_outcome> responses;  ///< Answers to the request.
};

packet_job packet(const std::string& fingerprint, std::size_t records) {
  return {"356307042441013", fingerprint, std::vector<ports::record_fields>(records), "8E"};
}

/// Stands in for a session: told to go, it writes; it hears what a session hears.
using probe_actor =
    caf::typed_actor<caf::reacts_to<go_atom>, caf::reacts_to<persisted_atom, write_outcome>>;

/// Sends, on (go_atom), three packets, a plain event and an event as a request, as a
/// session does; records every answer it gets.
probe_actor::behavior_type session_probe(probe_actor::pointer self, telemetry_writer_actor writer,
                                         std::shared_ptr<heard> log) {
  return {
      [=](go_atom) {
        self->send(writer, ingest_atom::value, packet("a", 2));
        self->send(writer, note_atom::value,
                   journal_event{"356307042441013", "frame_rejected", -1, {}});
        self->send(writer, ingest_atom::value, packet("dup", 1));
        self->request(writer, caf::infinite, event_atom::value,
                      journal_event{"356307042441013", "identified", 1, {}})
            .then([log](const write_outcome& o) { log->responses.push_back(o); });
        self->send(writer, ingest_atom::value, packet("c", 3));
      },
      [log](persisted_atom, const write_outcome& o) { log->persisted.push_back(o); },
  };
}

class TelemetryWriter : public ::testing::Test {
 protected:
  ~TelemetryWriter() override {
    caf::anon_send_exit(probe, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
    sched.run();
  }
  void go() {
    caf::anon_send(probe, go_atom::value);
    sched.run();
  }
  /// A writer that lingers 1 ms for a batch of fewer than `linger_below` writes (at most
  /// `max_batch` a batch), started with
  /// every other actor, so that each run_once that follows is this writer's.
  telemetry_writer_actor lingering_writer(std::size_t max_batch = writer_config{}.max_batch,
                                          std::size_t linger_below = writer_config{}.linger_below) {
    writer_config config = answering_at_once();
    config.linger = std::chrono::microseconds{1000};
    config.max_batch = max_batch;
    config.linger_below = linger_below;
    telemetry_writer_actor lingering = sys.spawn(telemetry_writer, config, store, 1, counters);
    sched.run();
    return lingering;
  }

  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scheduler::test_coordinator& sched =
      dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  std::shared_ptr<scripted_store> store = std::make_shared<scripted_store>();
  std::shared_ptr<infra::metrics::gateway_counters> counters =
      std::make_shared<infra::metrics::gateway_counters>();
  /// The writer most tests drive answers failures at once (holds nothing); the tests
  /// of holding spawn one of their own.
  static writer_config answering_at_once() {
    writer_config c;
    c.persist_retry = std::chrono::milliseconds{0};
    return c;
  }
  telemetry_writer_actor writer =
      sys.spawn(telemetry_writer, answering_at_once(), store, 0, counters);
  /// A writer that holds writes safe to send again for `persist_retry`, trying every
  /// millisecond, and a device probe on it; both started.
  std::pair<telemetry_writer_actor, probe_actor> holding_writer(
      std::chrono::milliseconds persist_retry) {
    writer_config config;
    config.persist_retry = persist_retry;
    config.retry_delay = std::chrono::milliseconds{1};
    telemetry_writer_actor holding = sys.spawn(telemetry_writer, config, store, 2, counters);
    probe_actor device = sys.spawn(session_probe, holding, log);
    sched.run();
    return {holding, device};
  }
  std::shared_ptr<heard> log = std::make_shared<heard>();
  probe_actor probe = sys.spawn(session_probe, writer, log);
};

// Everything in the mailbox goes in one batch, in arrival order; each packet is
// answered with (persisted, outcome) in that order, the request through its response,
// and the plain event not at all.
TEST_F(TelemetryWriter, AnswersEachPacketInOrderAndThePlainEventNotAtAll) {
  go();
  ASSERT_EQ(store->batches.size(), 1U);
  const auto& batch = store->batches[0];
  ASSERT_EQ(batch.size(), 5U);
  EXPECT_EQ(batch[0].packet.fingerprint, "a");
  EXPECT_EQ(batch[1].event.type, "frame_rejected");
  EXPECT_EQ(batch[2].packet.fingerprint, "dup");
  EXPECT_EQ(batch[3].event.type, "identified");
  EXPECT_EQ(batch[4].packet.fingerprint, "c");
  ASSERT_EQ(log->persisted.size(), 3U);
  EXPECT_TRUE(log->persisted[0].ok);
  EXPECT_EQ(log->persisted[0].stored, 2);
  EXPECT_TRUE(log->persisted[1].duplicate);
  EXPECT_EQ(log->persisted[2].stored, 3);
  ASSERT_EQ(log->responses.size(), 1U);
  EXPECT_TRUE(log->responses[0].ok);
}

// A writer resumed for every batch would otherwise take CAF's logger lock each time
// (actors/gateway/session_actor_base.hpp); here it runs on the test's own thread.
TEST_F(TelemetryWriter, LeavesCafsLoggerOnTheThreadThatRunsIt) {
  caf::logger::set_current_actor_system(&sys);
  ASSERT_NE(caf::logger::current_logger(), nullptr);
  go();
  EXPECT_EQ(caf::logger::current_logger(), nullptr);
  EXPECT_EQ(store->batches.size(), 1U);
}

// On a Redis Cluster one master can die while the others answer: the ops of its
// devices fail, the others' are ACKed, and the writer does not back off, so the next
// batch reaches the store at once.
TEST_F(TelemetryWriter, OpsOfOneFailedClusterMasterFailAloneAndTheWriterGoesOn) {
  store->lost_imei = "356307042441013";  // every packet of the probe
  auto other = sys.spawn([this](probe_actor::pointer self) -> probe_actor::behavior_type {
    return {
        [this, self](go_atom) {
          packet_job p = packet("b", 1);
          p.imei = "356307042441021";
          self->send(writer, ingest_atom::value, std::move(p));
        },
        [this](persisted_atom, const write_outcome& o) { log->persisted.push_back(o); },
    };
  });
  caf::anon_send(other, go_atom::value);
  go();
  ASSERT_EQ(store->batches.size(), 1U);
  ASSERT_EQ(log->persisted.size(), 4U);
  int ok = 0;
  for (const auto& o : log->persisted) {
    if (o.ok) {
      ++ok;
    } else {
      EXPECT_EQ(o.error, "IO 127.0.0.1:7000: connection refused");
    }
  }
  EXPECT_EQ(ok, 1);  // the other device's packet
  EXPECT_EQ(counters->writer_redis_errors.load(), 1U);
  EXPECT_EQ(counters->writers_down.load(), 0);
  caf::anon_send(other, go_atom::value);
  sched.run();
  EXPECT_EQ(store->batches.size(), 2U);  // not held back by a backoff
  ASSERT_EQ(log->persisted.size(), 5U);
  EXPECT_TRUE(log->persisted[4].ok);
  caf::anon_send_exit(other, caf::exit_reason::user_shutdown);
}

// While Redis is down every write is answered at once as failed, so no device is
// ACKed; within the backoff the store is not even asked.
TEST_F(TelemetryWriter, WhileRedisIsDownEveryWriteFailsAndTheStoreRestsDuringTheBackoff) {
  store->failing = true;
  go();
  ASSERT_EQ(store->batches.size(), 1U);
  ASSERT_EQ(log->persisted.size(), 3U);
  for (const auto& o : log->persisted) {
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.error, "IO error: connection refused");
  }
  ASSERT_EQ(log->responses.size(), 1U);
  EXPECT_FALSE(log->responses[0].ok);
  EXPECT_EQ(counters->writer_redis_errors.load(), 1U);

  go();  // at once, well inside the first 100 ms of backoff
  EXPECT_EQ(store->batches.size(), 1U);
  ASSERT_EQ(log->persisted.size(), 6U);
  EXPECT_FALSE(log->persisted[5].ok);
  // Refused without asking the store, for the reason the store last gave.
  EXPECT_EQ(log->persisted[5].failure, unreachable);
}

// The writer knows a transport failure by its type, not by its words: the ops of a
// master that failed so count as a Redis error whatever their text says, and a refusal
// of another kind does not, even with a text that starts with "IO".
TEST_F(TelemetryWriter, ATransportFailureIsKnownByItsTypeNotItsText) {
  store->lost_imei = "356307042441013";  // every op of the probe
  store->lost_text = "127.0.0.1:7000: connection refused";
  go();
  ASSERT_EQ(log->persisted.size(), 3U);
  for (const auto& o : log->persisted) {
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.failure, unreachable);
  }
  EXPECT_EQ(counters->writer_redis_errors.load(), 1U);
  EXPECT_EQ(counters->writers_down.load(), 0) << "one master of several: no backoff";

  store->lost_text = "IO-looking words in a refusal";
  store->lost_failure = ports::failure_kind::no_permission;
  go();
  EXPECT_EQ(store->batches.size(), 2U);
  EXPECT_EQ(counters->writer_redis_errors.load(), 1U) << "not counted as a transport failure";
}

// A write that failed where sending it again is safe (its slot moved) is held and sent
// again; its sender hears once, of the success. A later write of the same device waits
// behind it, so the answers keep their order.
TEST_F(TelemetryWriter, AWriteSafeToSendAgainIsHeldAndSentAgainInOrder) {
  auto [holding, device] = holding_writer(std::chrono::seconds{30});
  store->retryable_batches = 1;
  caf::anon_send(device, go_atom::value);
  sched.run();
  ASSERT_EQ(store->batches.size(), 1U);
  EXPECT_TRUE(log->persisted.empty()) << "answered a packet that is held";
  // Behind the held ones: not sent before them.
  caf::anon_send(holding, ingest_atom::value, packet("later", 1));
  sched.run();
  EXPECT_EQ(store->batches.size(), 1U);
  sched.trigger_timeouts();
  sched.run();
  ASSERT_EQ(store->batches.size(), 2U);
  const auto& resent = store->batches[1];
  ASSERT_EQ(resent.size(), 4U);  // the packets; events are answered at once
  EXPECT_EQ(resent[0].packet.fingerprint, "a");
  EXPECT_EQ(resent[1].packet.fingerprint, "dup");
  EXPECT_EQ(resent[2].packet.fingerprint, "c");
  EXPECT_EQ(resent[3].packet.fingerprint, "later");
  ASSERT_EQ(log->persisted.size(), 3U);
  EXPECT_EQ(log->persisted[0].stored, 2);
  EXPECT_TRUE(log->persisted[1].duplicate);
  EXPECT_EQ(log->persisted[2].stored, 3);
  for (const auto& o : log->persisted) EXPECT_TRUE(o.ok) << o.error;
  // The event request was answered with its failure when it came back.
  ASSERT_EQ(log->responses.size(), 1U);
  EXPECT_FALSE(log->responses[0].ok);
  caf::anon_send_exit(device, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(holding, caf::exit_reason::user_shutdown);
}

// Held no longer than --persist-retry-ms: then answered with the failure (no ACK).
TEST_F(TelemetryWriter, AHeldWriteIsAnsweredAsFailedWhenItsTimeIsUp) {
  auto [holding, device] = holding_writer(std::chrono::milliseconds{20});
  store->retryable_batches = 1000;
  caf::anon_send(device, go_atom::value);
  sched.run();
  std::this_thread::sleep_for(std::chrono::milliseconds{30});
  sched.trigger_timeouts();
  sched.run();
  ASSERT_EQ(log->persisted.size(), 3U);
  for (const auto& o : log->persisted) {
    EXPECT_FALSE(o.ok);
    EXPECT_NE(o.error.find("MOVED"), std::string::npos) << o.error;
  }
  caf::anon_send_exit(device, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(holding, caf::exit_reason::user_shutdown);
}

// The log's count of packets not ACKed agrees with what the devices heard, and so with
// teltonika_persist_failures_total, which their sessions count from the same answers:
// packets held through a failover and then stored count for nothing; packets answered
// as failed once their time is up count once each, however often they were tried.
TEST_F(TelemetryWriter, TheFailureLogCountsThePacketsTheDevicesHeardFail) {
  std::vector<std::string> lines;
  auto health = std::make_shared<domain::persist_health>(
      domain::persist_health::settings{},
      [&lines](const std::string& line) { lines.push_back(line); });
  auto recovery = [&] {
    health->settled(domain::clock::now() + std::chrono::seconds{10});
    const auto it = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("recovered after") != std::string::npos;
    });
    return it == lines.end() ? std::string() : *it;
  };
  auto failed_answers = [&] {
    return std::count_if(log->persisted.begin(), log->persisted.end(),
                         [](const write_outcome& o) { return !o.ok; });
  };
  std::vector<caf::actor> spawned;
  // A writer holding for `persist_retry`, reporting to `health`, and a device that sends
  // its packets through it.
  auto send_through_writer = [&](std::chrono::milliseconds persist_retry) {
    writer_config config;
    config.retry_delay = std::chrono::milliseconds{1};
    config.health = health;
    config.persist_retry = persist_retry;
    telemetry_writer_actor reporting = sys.spawn(telemetry_writer, config, store, 0, counters);
    probe_actor device = sys.spawn(session_probe, reporting, log);
    spawned.push_back(caf::actor_cast<caf::actor>(reporting));
    spawned.push_back(caf::actor_cast<caf::actor>(device));
    caf::anon_send(device, go_atom::value);
    sched.run();
  };

  // Held twice, then stored: no packet was refused to its device.
  store->retryable_batches = 2;
  send_through_writer(std::chrono::seconds{30});
  for (int i = 0; i < 3; ++i) {
    sched.trigger_timeouts();
    sched.run();
  }
  ASSERT_EQ(store->batches.size(), 3U);
  ASSERT_EQ(log->persisted.size(), 3U);
  EXPECT_EQ(failed_answers(), 0);
  const std::string first = recovery();
  EXPECT_NE(first.find("2 failure(s), 0 packet(s) not ACKed meanwhile"), std::string::npos)
      << first;

  // Held until --persist-retry-ms ran out, tried again and again: 3 refused.
  lines.clear();
  log->persisted.clear();
  store->batches.clear();
  store->retryable_batches = 1000;
  send_through_writer(std::chrono::milliseconds{200});
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
    sched.trigger_timeouts();
    sched.run();
  }
  ASSERT_EQ(log->persisted.size(), 3U);
  EXPECT_EQ(failed_answers(), 3);
  store->retryable_batches = 0;
  caf::anon_send(spawned.back(), go_atom::value);
  sched.run();
  const std::string second = recovery();
  EXPECT_NE(second.find(", 3 packet(s) not ACKed meanwhile"), std::string::npos) << second;
  for (const caf::actor& a : spawned) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

// With a linger, a batch that is not full waits for the writes that arrive meanwhile.
// Here the second packet is in the mailbox behind the first one's flush, as a packet
// that arrives while that flush sleeps would be: the flush it sends itself after the
// linger queues behind the packet, and both go to Redis in one batch.
TEST_F(TelemetryWriter, ALingeringBatchTakesTheWritesThatArriveMeanwhile) {
  telemetry_writer_actor patient = lingering_writer();
  caf::anon_send(patient, ingest_atom::value, packet("first", 1));
  sched.run_once();  // takes the packet and queues its flush
  caf::anon_send(patient, ingest_atom::value, packet("second", 1));
  sched.run();
  ASSERT_EQ(store->batches.size(), 1U);
  ASSERT_EQ(store->batches[0].size(), 2U);
  EXPECT_EQ(store->batches[0][0].packet.fingerprint, "first");
  EXPECT_EQ(store->batches[0][1].packet.fingerprint, "second");
  caf::anon_send_exit(patient, caf::exit_reason::user_shutdown);
}

// A full batch does not linger: the write that fills it sends it.
TEST_F(TelemetryWriter, AFullBatchGoesWithoutLingering) {
  telemetry_writer_actor patient = lingering_writer(2);
  caf::anon_send(patient, ingest_atom::value, packet("first", 1));
  caf::anon_send(patient, ingest_atom::value, packet("second", 1));
  sched.run_once();  // takes the first packet and queues a flush
  sched.run_once();  // the second fills the batch, which goes at once
  ASSERT_EQ(store->batches.size(), 1U);
  EXPECT_EQ(store->batches[0].size(), 2U);
  sched.run();
  EXPECT_EQ(store->batches.size(), 1U);  // the queued flush finds nothing to send
  caf::anon_send_exit(patient, caf::exit_reason::user_shutdown);
}

// A batch of linger_below writes or more goes without lingering, although not full:
// under load the batches are that large anyway, and a writer sleeping on one would
// leave Redis idle.
TEST_F(TelemetryWriter, ALargeBatchGoesWithoutLingering) {
  telemetry_writer_actor patient = lingering_writer(writer_config{}.max_batch, 2);
  caf::anon_send(patient, ingest_atom::value, packet("first", 1));
  caf::anon_send(patient, ingest_atom::value, packet("second", 1));
  sched.run_once();  // takes the first packet and queues a flush
  sched.run_once();  // takes the second
  sched.run_once();  // the flush: two writes reach linger_below, and go at once
  ASSERT_EQ(store->batches.size(), 1U);
  EXPECT_EQ(store->batches[0].size(), 2U);
  caf::anon_send(patient, ingest_atom::value, packet("third", 1));
  sched.run_once();  // takes the third packet and queues a flush
  sched.run_once();  // the flush: one write lingers (sleeps, then flushes again)
  EXPECT_EQ(store->batches.size(), 1U);
  sched.run();
  ASSERT_EQ(store->batches.size(), 2U);
  EXPECT_EQ(store->batches[1].size(), 1U);
  caf::anon_send_exit(patient, caf::exit_reason::user_shutdown);
}

// A writer that found Redis down does not linger: while it backs off it answers at
// once, and its first try after the backoff goes at once too, alone.
TEST_F(TelemetryWriter, AWriterThatFoundRedisDownDoesNotLinger) {
  telemetry_writer_actor patient = lingering_writer();
  store->failing = true;
  caf::anon_send(patient, ingest_atom::value, packet("lost", 1));
  sched.run();
  ASSERT_EQ(store->batches.size(), 1U);
  EXPECT_EQ(counters->writers_down.load(), 1);
  // Past the first backoff (100 ms), Redis is back.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  store->failing = false;
  caf::anon_send(patient, ingest_atom::value, packet("first", 1));
  sched.run_once();  // takes the packet and queues its flush
  sched.run_once();  // the flush goes to the store without waiting
  ASSERT_EQ(store->batches.size(), 2U);
  ASSERT_EQ(store->batches[1].size(), 1U);
  EXPECT_EQ(store->batches[1][0].packet.fingerprint, "first");
  EXPECT_EQ(counters->writers_down.load(), 0);
  sched.run();
  caf::anon_send_exit(patient, caf::exit_reason::user_shutdown);
}

// Without one, the writer sends what it has as soon as it reads its flush: the same
// steps make two batches.
TEST_F(TelemetryWriter, WithoutALingerEachMailboxReadIsABatch) {
  sched.run();  // every actor started, so that each run_once below is the writer's
  caf::anon_send(writer, ingest_atom::value, packet("first", 1));
  sched.run_once();  // takes the packet and queues its flush
  caf::anon_send(writer, ingest_atom::value, packet("second", 1));
  sched.run();
  ASSERT_EQ(store->batches.size(), 2U);
  EXPECT_EQ(store->batches[0][0].packet.fingerprint, "first");
  EXPECT_EQ(store->batches[1][0].packet.fingerprint, "second");
}

}  // namespace
}  // namespace tgw::actors::gateway
