// Outbound commands in the session actor, on CAF's deterministic scheduler: a fake
// link, a fake writer that answers when told, and a fake responder that records what
// the session publishes.
#include <gtest/gtest.h>
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/commands/command_actors.hpp"
#include "actors/gateway/gateway_atoms.hpp"
#include "actors/gateway/session.hpp"
#include "actors/gateway/session_directory.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/command.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "tests/actors/gateway/session_fakes.hpp"

namespace tgw::actors::gateway {
namespace {

using ports::command_entry;
using ports::journal_event;
using ports::packet_job;
using ports::resolution;
using ports::write_outcome;
using bytes = std::vector<std::uint8_t>;
using test::avl_packet;
using test::fake_link;
using test::test_config;
using release_atom = caf::atom_constant<caf::atom("release")>;

constexpr const char* device_imei = "356307042441013";

// The telemetry writer's interface, and (release_atom) for the test.
using fake_writer_actor = telemetry_writer_actor::extend<caf::reacts_to<release_atom>>;

// Answers events at once and holds packets until (release_atom). Sessions send it
// nothing else.
fake_writer_actor::behavior_type fake_writer(fake_writer_actor::pointer self) {
  auto pending = std::make_shared<std::vector<session_actor>>();
  return {
      [self, pending](ingest_atom, packet_job&) {
        pending->push_back(caf::actor_cast<session_actor>(self->current_sender()));
      },
      [](event_atom, journal_event&) {
        return write_outcome{true, false, 0, ""};
      },
      [](note_atom, journal_event&) {},
      [](persist_atom, packet_job&) { return write_outcome{}; },
      [self, pending](release_atom) {
        for (auto& session : *pending)
          self->send(session, persisted_atom::value, write_outcome{true, false, 1, ""});
        pending->clear();
      },
  };
}

struct responder_log {
  std::vector<std::pair<command_entry, resolution>> resolved;
  std::vector<std::string> drained;
};

// Records what it is told to publish and drain.
commands::command_responder_actor::behavior_type fake_responder(
    commands::command_responder_actor::pointer, std::shared_ptr<responder_log> log) {
  return {
      [log](commands::resolve_atom, command_entry& e, resolution& r) {
        log->resolved.emplace_back(std::move(e), std::move(r));
      },
      [log](commands::drain_off_atom, const std::string& imei) { log->drained.push_back(imei); },
      [](commands::sync_atom) { return true; },
  };
}

class SessionCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = std::make_shared<session_config>();
    config->instance_id = "test";
    config->counters = std::make_shared<infra::metrics::gateway_counters>();
    config->writers.push_back(writer);
    config->directory = directory;
    config->responder = responder;
    config->command_queue_limit = 2;
    config->command_timeout = std::chrono::milliseconds{500};
    actor = sys.spawn(session, link, std::shared_ptr<const session_config>(config));
    sched.run();
    bytes hs;
    ASSERT_EQ(codecs::imei::parse(device_imei, id), codecs::errc::ok);
    codecs::encode_imei_packet(id, hs);
    deliver(codecs::frame_kind::imei, hs);
    ASSERT_EQ(link->sent, std::vector<bytes>{bytes{0x01}});
    link->sent.clear();
  }
  void TearDown() override {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(responder, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void deliver(codecs::frame_kind kind, const bytes& b, std::uint8_t codec = 0) {
    caf::anon_send(actor, frame_atom::value, static_cast<std::uint8_t>(kind), codec, b);
    sched.run();
  }
  void command(const std::string& command_id, int codec = 12, const std::string& text = "getinfo") {
    command_entry e;
    e.entry_id = "1-" + command_id;
    e.command_id = command_id;
    e.target_imei = device_imei;
    e.codec = codec;
    e.payload = text;
    caf::anon_send(actor, commands::command_atom::value, std::move(e));
    sched.run();
  }
  static bytes device_frame(codecs::codec_id codec, std::uint8_t type, const std::string& text,
                            const codecs::imei& device = {}) {
    codecs::command_fields f;
    f.codec = codec;
    f.type = type;
    f.device = device;
    f.payload = codecs::as_bytes(text);
    bytes out;
    EXPECT_EQ(codecs::encode_command_frame(f, out), codecs::errc::ok);
    return out;
  }
  /// The device answers the command in flight: a Codec 12 or 14 response (ACK) frame,
  /// Codec 14 naming `device`.
  void reply(codecs::codec_id codec, const std::string& text, const codecs::imei& device = {}) {
    deliver(codecs::frame_kind::command,
            device_frame(codec, codecs::message_type::response, text, device),
            static_cast<std::uint8_t>(codec));
  }
  static bytes command_frame(codecs::codec_id codec, const std::string& text,
                             const codecs::imei& device = {}) {
    return device_frame(codec, codecs::message_type::command, text, device);
  }

  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scheduler::test_coordinator& sched =
      dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  std::shared_ptr<fake_link> link = std::make_shared<fake_link>();
  std::shared_ptr<responder_log> log = std::make_shared<responder_log>();
  std::shared_ptr<session_directory> directory = std::make_shared<session_directory>();
  fake_writer_actor writer = sys.spawn(fake_writer);
  commands::command_responder_actor responder = sys.spawn(fake_responder, log);
  session_actor actor;
  codecs::imei id;
};

TEST_F(SessionCommands, AttachesToTheDirectoryAndDrainsTheOfflineQueueOnHandshake) {
  EXPECT_EQ(directory->find(device_imei), actor);
  EXPECT_EQ(log->drained, std::vector<std::string>{device_imei});
}

TEST_F(SessionCommands, WritesACodec12CommandAndPublishesTheDevicesAnswer) {
  command("c1");
  ASSERT_EQ(link->sent.size(), 1U);
  EXPECT_EQ(link->sent[0], command_frame(codecs::codec_id::codec12, "getinfo"));
  deliver(codecs::frame_kind::command,
          device_frame(codecs::codec_id::codec12, codecs::message_type::response, "RTC:ok"), 0x0C);
  ASSERT_EQ(log->resolved.size(), 1U);
  EXPECT_EQ(log->resolved[0].first.command_id, "c1");
  EXPECT_EQ(log->resolved[0].second.status, "responded");
  EXPECT_EQ(log->resolved[0].second.response, "RTC:ok");
}

TEST_F(SessionCommands, ACommandWaitsForThePendingAvlAck) {
  deliver(codecs::frame_kind::avl, avl_packet(1), 0x08);  // persisting, not yet ACKed
  command("c1");
  EXPECT_TRUE(link->sent.empty()) << "a command went out while an ACK was owed";
  caf::anon_send(writer, release_atom::value);
  sched.run();
  ASSERT_EQ(link->sent.size(), 2U);
  EXPECT_EQ(link->sent[0], (bytes{0, 0, 0, 1}));  // the ACK first
  EXPECT_EQ(link->sent[1], command_frame(codecs::codec_id::codec12, "getinfo"));
}

TEST_F(SessionCommands, Codec14CarriesTheImeiAndANackMeansImeiMismatch) {
  command("c14", 14, "getver");
  ASSERT_EQ(link->sent.size(), 1U);
  EXPECT_EQ(link->sent[0], command_frame(codecs::codec_id::codec14, "getver", id));
  deliver(codecs::frame_kind::command,
          device_frame(codecs::codec_id::codec14, codecs::message_type::nack, "", id), 0x0E);
  ASSERT_EQ(log->resolved.size(), 1U);
  EXPECT_EQ(log->resolved[0].second.status, "failed");
  EXPECT_EQ(log->resolved[0].second.failure_reason, "imei_mismatch");
}

TEST_F(SessionCommands, Codec14AckInAnotherDevicesNameIsAnImeiMismatch) {
  command("c14", 14, "getver");
  ASSERT_EQ(link->sent.size(), 1U);
  codecs::imei other;
  ASSERT_EQ(codecs::imei::parse("356307042441021", other), codecs::errc::ok);
  reply(codecs::codec_id::codec14, "Ver:1", other);
  ASSERT_EQ(log->resolved.size(), 1U);
  EXPECT_EQ(log->resolved[0].second.status, "failed");
  EXPECT_EQ(log->resolved[0].second.failure_reason, "imei_mismatch");
  EXPECT_EQ(log->resolved[0].second.response, "Ver:1");  // what the device said, kept
}

TEST_F(SessionCommands, AnAnswerInTheOtherCodecIsACodecMismatch) {
  // A Codec 12 answer to a Codec 14 command: the device never checked the IMEI.
  command("c14", 14, "getver");
  reply(codecs::codec_id::codec12, "Ver:1");
  // A Codec 14 ACK to a Codec 12 command answers something else.
  command("c12", 12, "getinfo");
  reply(codecs::codec_id::codec14, "RTC", id);
  ASSERT_EQ(log->resolved.size(), 2U);
  for (const auto& [entry, outcome] : log->resolved) {
    SCOPED_TRACE(entry.command_id);
    EXPECT_EQ(outcome.status, "failed");
    EXPECT_EQ(outcome.failure_reason, "codec_mismatch");
  }
  EXPECT_EQ(log->resolved[0].second.response, "Ver:1");
}

TEST_F(SessionCommands, Codec14AckOfTheRightImeiIsResponded) {
  command("c14", 14, "getver");
  reply(codecs::codec_id::codec14, "Ver:1", id);
  ASSERT_EQ(log->resolved.size(), 1U);
  EXPECT_EQ(log->resolved[0].second.status, "responded");
  EXPECT_EQ(log->resolved[0].second.response, "Ver:1");
}

TEST_F(SessionCommands, OneInFlightTheNextAfterTheAnswerAndAFullQueueRefuses) {
  command("c1");
  command("c2");
  command("c3");  // the limit (2) counts the one in flight
  ASSERT_EQ(link->sent.size(), 1U);
  ASSERT_EQ(log->resolved.size(), 1U);
  EXPECT_EQ(log->resolved[0].first.command_id, "c3");
  EXPECT_EQ(log->resolved[0].second.failure_reason, "write_queue_full");
  deliver(codecs::frame_kind::command,
          device_frame(codecs::codec_id::codec12, codecs::message_type::response, "a"), 0x0C);
  ASSERT_EQ(link->sent.size(), 2U);  // c2 goes out once c1 is answered
  EXPECT_EQ(link->sent[1], command_frame(codecs::codec_id::codec12, "getinfo"));
}

TEST_F(SessionCommands, NoAnswerInTimeIsATimeoutAndTheQueueMovesOn) {
  command("c1");
  command("c2");
  sched.trigger_timeouts();
  sched.run();
  ASSERT_GE(log->resolved.size(), 1U);
  EXPECT_EQ(log->resolved[0].first.command_id, "c1");
  EXPECT_EQ(log->resolved[0].second.failure_reason, "timeout");
  EXPECT_EQ(link->sent.size(), 2U);
}

TEST_F(SessionCommands, ClosingFailsWhatIsInFlightAndQueuedAndDetaches) {
  command("c1");
  command("c2");
  caf::anon_send(actor, closed_atom::value, std::string("peer closed"));
  sched.run();
  ASSERT_EQ(log->resolved.size(), 2U);
  for (const auto& [entry, outcome] : log->resolved)
    EXPECT_EQ(outcome.failure_reason, "socket_closed") << entry.command_id;
  EXPECT_FALSE(directory->find(device_imei));
}

/// A writer that answers journal events only when released, as a slow Redis would.
/// The session sends it nothing else before it is released.
fake_writer_actor::behavior_type slow_event_writer(fake_writer_actor::pointer self) {
  auto pending = std::make_shared<std::vector<caf::typed_response_promise<write_outcome>>>();
  return {
      [self, pending](event_atom, journal_event&) {
        pending->push_back(self->make_response_promise<write_outcome>());
        return pending->back();
      },
      [](note_atom, journal_event&) {},
      [](ingest_atom, packet_job&) {},
      [](persist_atom, packet_job&) { return write_outcome{}; },
      [pending](release_atom) {
        for (auto& p : *pending) p.deliver(write_outcome{true, false, 0, ""});
        pending->clear();
      },
  };
}

// A command can reach the session while the handshake's 01 still waits for the
// journal. The device must read the 01 first; a command frame before it breaks the
// handshake. The offline queue is drained only once the device is identified (its
// `identified` journaled), in the same step as the 01.
TEST(SessionHandshake, ACommandArrivingBeforeTheHandshakeIsAnsweredWaitsForThe01) {
  test_config cfg;
  caf::actor_system sys{cfg};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  auto link = std::make_shared<fake_link>();
  auto log = std::make_shared<responder_log>();
  auto writer = sys.spawn(slow_event_writer);
  auto responder = sys.spawn(fake_responder, log);
  auto config = std::make_shared<session_config>();
  config->instance_id = "test";
  config->counters = std::make_shared<infra::metrics::gateway_counters>();
  config->writers.push_back(writer);
  config->directory = std::make_shared<session_directory>();
  config->responder = responder;
  config->command_queue_limit = 4;
  auto actor = sys.spawn(session, link, std::shared_ptr<const session_config>(config));
  sched.run();

  codecs::imei id;
  ASSERT_EQ(codecs::imei::parse(device_imei, id), codecs::errc::ok);
  bytes hs;
  codecs::encode_imei_packet(id, hs);
  caf::anon_send(actor, frame_atom::value, static_cast<std::uint8_t>(codecs::frame_kind::imei),
                 std::uint8_t{0}, hs);
  sched.run();
  EXPECT_TRUE(log->drained.empty()) << "drained before the device was identified";
  EXPECT_TRUE(link->sent.empty()) << "the 01 went out before the identified event was journaled";

  command_entry e;
  e.entry_id = "1-queued";
  e.command_id = "queued";
  e.target_imei = device_imei;
  e.codec = 12;
  e.payload = "getinfo";
  caf::anon_send(actor, commands::command_atom::value, std::move(e));
  sched.run();
  EXPECT_TRUE(link->sent.empty()) << "a command went out before the handshake was answered";

  caf::anon_send(writer, release_atom::value);
  sched.run();
  EXPECT_EQ(log->drained, std::vector<std::string>{device_imei});
  codecs::command_fields f;
  f.codec = codecs::codec_id::codec12;
  f.type = codecs::message_type::command;
  f.payload = codecs::as_bytes(std::string("getinfo"));
  bytes frame;
  ASSERT_EQ(codecs::encode_command_frame(f, frame), codecs::errc::ok);
  ASSERT_EQ(link->sent.size(), 2U);
  EXPECT_EQ(link->sent[0], bytes{0x01});
  EXPECT_EQ(link->sent[1], frame);

  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(responder, caf::exit_reason::user_shutdown);
  sched.run();
}

}  // namespace
}  // namespace tgw::actors::gateway
