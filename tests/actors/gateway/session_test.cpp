// The session actor on CAF's deterministic scheduler, with a fake device link and a
// fake writer that answers only when told to: what the device sees, and when.
#include "actors/gateway/session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <mutex>

#include "actors/gateway/gateway_atoms.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/command.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "tests/actors/gateway/session_fakes.hpp"

namespace tgw::actors::gateway {
namespace {

using ports::journal_event;
using ports::packet_job;
using ports::write_outcome;
using bytes = std::vector<std::uint8_t>;
using test::avl_packet;
using test::fake_link;
using test::test_config;
using release_atom = caf::atom_constant<caf::atom("release")>;

struct writer_log {
  std::vector<packet_job> packets;
  std::vector<journal_event> events;
  /// The store knows no device: a known_only event is answered unknown_device.
  bool store_knows_nothing = false;
};

// A packet or an identified event waiting for (release_atom, ok): a packet's session
// is answered with persisted_atom, a request through its promise.
struct held_write {
  session_actor session;
  caf::typed_response_promise<write_outcome> promise;
};

// The telemetry writer's interface, and (release_atom, ok) for the test.
using fake_writer_actor = telemetry_writer_actor::extend<caf::reacts_to<release_atom, bool>>;

// Holds every packet and every awaited event until (release_atom, ok) answers them
// all, in arrival order as the real writer does. Sessions send it nothing else.
fake_writer_actor::behavior_type fake_writer(fake_writer_actor::pointer self,
                                             std::shared_ptr<writer_log> log) {
  auto pending = std::make_shared<std::vector<held_write>>();
  return {
      [self, log, pending](ingest_atom, packet_job& job) {
        log->packets.push_back(job);
        pending->push_back({caf::actor_cast<session_actor>(self->current_sender()), {}});
      },
      [self, log, pending](event_atom, journal_event& e) -> caf::result<write_outcome> {
        log->events.push_back(e);
        if (e.known_only && log->store_knows_nothing) {
          write_outcome unknown{true, false, 0, ""};
          unknown.unknown_device = true;
          return unknown;
        }
        pending->push_back({{}, self->make_response_promise<write_outcome>()});
        return pending->back().promise;
      },
      [log](note_atom, journal_event& e) { log->events.push_back(e); },
      [](persist_atom, packet_job&) { return write_outcome{}; },
      [self, pending](release_atom, bool ok) {
        for (auto& p : *pending) {
          write_outcome o{ok, false, ok ? 1 : 0, ok ? "" : "IO down"};
          if (!ok) o.failure = ports::failure_kind::unreachable;
          if (p.session)
            self->send(p.session, persisted_atom::value, std::move(o));
          else
            p.promise.deliver(std::move(o));
        }
        pending->clear();
      },
  };
}

class SessionActor : public ::testing::Test {
 protected:
  SessionActor() {
    auto config = std::make_shared<session_config>();
    config->instance_id = "test";
    config->counters = counters;
    config->writers.push_back(writer);
    actor = sys.spawn(session, link, std::shared_ptr<const session_config>(config));
    sched.run();
  }
  ~SessionActor() override {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void deliver(codecs::frame_kind kind, const bytes& b, std::uint8_t codec = 0) {
    caf::anon_send(actor, frame_atom::value, static_cast<std::uint8_t>(kind), codec, b);
    sched.run();
  }
  void release(bool ok) {
    caf::anon_send(writer, release_atom::value, ok);
    sched.run();
  }
  void identify() {
    bytes hs;
    codecs::imei id;
    ASSERT_EQ(codecs::imei::parse("356307042441013", id), codecs::errc::ok);
    codecs::encode_imei_packet(id, hs);
    deliver(codecs::frame_kind::imei, hs);
    release(true);
  }

  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scheduler::test_coordinator& sched =
      dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  std::shared_ptr<fake_link> link = std::make_shared<fake_link>();
  std::shared_ptr<writer_log> log = std::make_shared<writer_log>();
  std::shared_ptr<infra::metrics::gateway_counters> counters =
      std::make_shared<infra::metrics::gateway_counters>();
  fake_writer_actor writer = sys.spawn(fake_writer, log);
  session_actor actor;
};

TEST_F(SessionActor, RepliesToTheHandshakeOnlyAfterTheEventIsWritten) {
  bytes hs;
  codecs::imei id;
  ASSERT_EQ(codecs::imei::parse("356307042441013", id), codecs::errc::ok);
  codecs::encode_imei_packet(id, hs);
  deliver(codecs::frame_kind::imei, hs);
  ASSERT_EQ(log->events.size(), 1U);
  EXPECT_EQ(log->events[0].type, "identified");
  EXPECT_TRUE(link->sent.empty());
  release(true);
  ASSERT_EQ(link->sent.size(), 1U);
  EXPECT_EQ(link->sent[0], bytes{0x01});
}

TEST_F(SessionActor, AcksTheRecordCountOnlyAfterPersisting) {
  identify();
  deliver(codecs::frame_kind::avl, avl_packet(3), 0x08);
  ASSERT_EQ(log->packets.size(), 1U);
  EXPECT_EQ(log->packets[0].records.size(), 3U);
  EXPECT_EQ(link->sent.size(), 1U);  // only the 01 so far
  release(true);
  ASSERT_EQ(link->sent.size(), 2U);
  EXPECT_EQ(link->sent[1], (bytes{0, 0, 0, 3}));
  EXPECT_EQ(link->frames_done, 2);  // the IMEI, and the packet
}

TEST_F(SessionActor, SendsNoAckWhenPersistingFails) {
  identify();
  deliver(codecs::frame_kind::avl, avl_packet(1), 0x08);
  release(false);
  EXPECT_EQ(link->sent.size(), 1U);
  EXPECT_EQ(link->frames_done, 2);
  EXPECT_EQ(counters->persist_failures.load(), 1U);
}

TEST_F(SessionActor, RefusesABadCrcWithoutPersistingAnything) {
  identify();
  bytes bad = avl_packet(1);
  bad.back() ^= 0xFF;
  deliver(codecs::frame_kind::avl, bad, 0x08);
  EXPECT_TRUE(log->packets.empty());
  EXPECT_EQ(log->events.size(), 1U);  // the spell of bad frames is not over
  EXPECT_EQ(link->sent.size(), 1U);
  EXPECT_EQ(link->frames_done, 2);
  EXPECT_EQ(counters->frames_rejected.load(), 1U);
  deliver(codecs::frame_kind::avl, bad, 0x08);
  // A good frame ends it: one event for both, ahead of the packet.
  deliver(codecs::frame_kind::avl, avl_packet(1), 0x08);
  ASSERT_EQ(log->events.size(), 2U);
  EXPECT_EQ(log->events[1].type, "frame_rejected");
  const auto& f = log->events[1].fields;
  EXPECT_NE(std::find(f.begin(), f.end(), std::make_pair(std::string("frames"), std::string("2"))),
            f.end());
  EXPECT_EQ(log->packets.size(), 1U);
  EXPECT_TRUE(link->closed_with.empty());
}

TEST_F(SessionActor, ClosesAtTheLastBadFrameItsBudgetAllows) {
  identify();
  bytes bad = avl_packet(1);
  bad.back() ^= 0xFF;
  for (int i = 0; i < 3; ++i) deliver(codecs::frame_kind::avl, bad, 0x08);
  EXPECT_EQ(link->closed_with, "too many bad frames (3), the last bad_crc");
  EXPECT_EQ(counters->refusals[infra::metrics::refusal::bad_frames], 1U);
  // Frames the connection had read already are not looked at, nor finished.
  const int done = link->frames_done;
  deliver(codecs::frame_kind::avl, bad, 0x08);
  EXPECT_EQ(counters->frames_rejected.load(), 3U);
  EXPECT_EQ(link->frames_done, done);
}

// A device the store knows costs no new-device token: its identified event is written
// for a known device only, and that is the only attempt.
TEST_F(SessionActor, AKnownDeviceIsIdentifiedInOneAttemptWithoutAToken) {
  identify();
  ASSERT_EQ(log->events.size(), 1U);
  EXPECT_TRUE(log->events[0].known_only);
  EXPECT_EQ(link->new_devices_asked, 0);
  EXPECT_EQ(link->sent, std::vector<bytes>{bytes{0x01}});
}

TEST_F(SessionActor, ANewDeviceIsIdentifiedOnATokenOfItsAddress) {
  log->store_knows_nothing = true;
  identify();
  ASSERT_EQ(log->events.size(), 2U);
  EXPECT_TRUE(log->events[0].known_only);
  EXPECT_FALSE(log->events[1].known_only);  // the second attempt makes the device
  EXPECT_EQ(link->new_devices_asked, 1);
  EXPECT_EQ(link->sent, std::vector<bytes>{bytes{0x01}});
}

TEST_F(SessionActor, ANewDeviceWithoutATokenIsRefusedAndNothingIsWritten) {
  log->store_knows_nothing = true;
  link->new_devices_allowed = false;
  identify();
  ASSERT_EQ(log->events.size(), 1U);  // the attempt for a known device only
  EXPECT_EQ(link->sent, std::vector<bytes>{bytes{0x00}});
  EXPECT_EQ(link->closed_with, "new-device budget spent");
  EXPECT_EQ(counters->refusals[infra::metrics::refusal::new_device], 1U);
  EXPECT_EQ(counters->handshakes_accepted.load(), 0U);
  // What it sends meanwhile is not looked at.
  deliver(codecs::frame_kind::avl, avl_packet(1), 0x08);
  EXPECT_TRUE(log->packets.empty());
}

TEST_F(SessionActor, ClosesOnDataBeforeTheHandshake) {
  deliver(codecs::frame_kind::avl, avl_packet(1), 0x08);
  EXPECT_EQ(link->closed_with, "data before handshake");
  EXPECT_TRUE(log->packets.empty());
}

TEST_F(SessionActor, JournalsTheDisconnectAndStops) {
  identify();
  caf::anon_send(actor, closed_atom::value, std::string("peer closed"));
  sched.run();
  ASSERT_EQ(log->events.size(), 2U);
  EXPECT_EQ(log->events[1].type, "disconnected");
  EXPECT_EQ(log->events[1].online, 0);
  EXPECT_EQ(counters->sessions_open.load(), 0);
}

// A device gone while its packet is at the writer: the packet is no longer counted as
// awaiting persistence (shutdown waits for that count), and the writer's late answer
// ACKs nothing.
TEST_F(SessionActor, ClosingWithAPacketAtTheWriterGivesBackItsInFlightCount) {
  identify();
  deliver(codecs::frame_kind::avl, avl_packet(2), 0x08);
  EXPECT_EQ(counters->persist_in_flight.load(), 1);
  caf::anon_send(actor, closed_atom::value, std::string("peer closed"));
  sched.run();
  EXPECT_EQ(counters->persist_in_flight.load(), 0);
  release(true);
  EXPECT_EQ(link->sent, (std::vector<bytes>{bytes{0x01}}));
  EXPECT_EQ(counters->acks_sent.load(), 0U);
}

// Sessions share one behaviour and take their messages in their default handler:
// something no session handles, or a known atom with the wrong elements, is dropped,
// and the session goes on as before. The session's handle refuses such messages at
// compile time; an untyped handle to it sends them anyway.
TEST_F(SessionActor, DropsAMessageItDoesNotKnowAndGoesOn) {
  identify();
  const auto untyped = caf::actor_cast<caf::actor>(actor);
  caf::anon_send(untyped, std::string("not for a session"));
  caf::anon_send(untyped, closed_atom::value, 42);
  sched.run();
  EXPECT_EQ(counters->sessions_open.load(), 1);
  EXPECT_TRUE(link->closed_with.empty());
  deliver(codecs::frame_kind::avl, avl_packet(1), 0x08);
  release(true);
  ASSERT_EQ(link->sent.size(), 2U);
  EXPECT_EQ(link->sent[1], (bytes{0, 0, 0, 1}));
}

// CAF would otherwise take one shared lock, several times a message, on every thread
// that runs a session (actors/gateway/session_actor_base.hpp). Here the deterministic
// scheduler runs the session on the test's own thread.
TEST_F(SessionActor, LeavesCafsLoggerOnTheThreadThatRunsIt) {
  caf::logger::set_current_actor_system(&sys);
  ASSERT_NE(caf::logger::current_logger(), nullptr);
  identify();
  EXPECT_EQ(caf::logger::current_logger(), nullptr);
  deliver(codecs::frame_kind::avl, avl_packet(1), 0x08);
  release(true);
  ASSERT_EQ(link->sent.size(), 2U);
  EXPECT_EQ(link->sent[1], (bytes{0, 0, 0, 1}));
}

TEST_F(SessionActor, IgnoresKeepalivesAndNeverAcksCommandReplies) {
  identify();
  deliver(codecs::frame_kind::keepalive, {0xFF});
  bytes reply;
  codecs::command_fields f;
  f.type = codecs::message_type::response;
  f.payload = codecs::as_bytes("OK");
  ASSERT_EQ(codecs::encode_command_frame(f, reply), codecs::errc::ok);
  deliver(codecs::frame_kind::command, reply, 0x0C);
  release(true);
  EXPECT_EQ(link->sent.size(), 1U);
  EXPECT_EQ(counters->keepalives.load(), 1U);
}

}  // namespace
}  // namespace tgw::actors::gateway
