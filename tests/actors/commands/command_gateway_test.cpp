// Outbound commands end to end: a real `tgw serve` on a real redis-server (or a 3+3
// Redis Cluster in actors_cluster_test, see redis_backend), devices as
// raw sockets that read the command frame and answer it (or not), and the publisher
// side through infra::commands or the `tgw command` binary. Waits poll up to a
// deadline; nothing asserts on how long anything took.
#include <signal.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <future>
#include <map>
#include <optional>
#include <set>

#include "codecs/avl_encode.hpp"
#include "codecs/command.hpp"
#include "codecs/imei.hpp"
#include "infra/commands/command_keys.hpp"
#include "infra/commands/command_publisher.hpp"
#include "tests/support/redis_backend.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
using infra::commands::command_response;

constexpr const char* imei_a = "356307042441013";
constexpr const char* imei_b = "356307042441021";

bytes handshake(const char* digits) {
  codecs::imei id;
  EXPECT_EQ(codecs::imei::parse(digits, id), codecs::errc::ok);
  bytes out;
  codecs::encode_imei_packet(id, out);
  return out;
}

/// The device side: connected and identified.
struct tracker {
  tracker(std::uint16_t port, const char* imei) : socket(port), id(imei) {
    socket.send(handshake(imei));
    accepted = socket.receive(1) == bytes{0x01};
  }
  /// The next Codec 12/14 frame the gateway wrote, decoded; nullopt if none came.
  std::optional<std::string> receive_command() {
    auto head = socket.receive(8);
    if (!head) return std::nullopt;
    const std::size_t length = (std::size_t{(*head)[4]} << 24) | (std::size_t{(*head)[5]} << 16) |
                               (std::size_t{(*head)[6]} << 8) | (*head)[7];
    auto rest = socket.receive(length + 4);
    if (!rest) return std::nullopt;
    last_frame = *head;
    last_frame.insert(last_frame.end(), rest->begin(), rest->end());
    codecs::command_message m;
    if (!codecs::decode_command_frame(last_frame, m).ok()) return std::nullopt;
    last_codec = m.codec;
    return std::string(m.payload_text());
  }
  void answer(const std::string& text, codecs::codec_id codec = codecs::codec_id::codec12) {
    codecs::command_fields f;
    f.codec = codec;
    f.type = codecs::message_type::response;
    f.payload = codecs::as_bytes(text);
    if (codec == codecs::codec_id::codec14) {
      EXPECT_EQ(codecs::imei::parse(id, f.device), codecs::errc::ok);
    }
    bytes out;
    ASSERT_EQ(codecs::encode_command_frame(f, out), codecs::errc::ok);
    socket.send(out);
  }

  device socket;
  std::string id;
  bool accepted = false;
  bytes last_frame;
  std::uint8_t last_codec = 0;
};

class Commands : public ::testing::Test {
 protected:
  explicit Commands(bool durable = false) : backend(durable) {}

  void start(const std::string& instance = "gwA", std::vector<std::string> extra = {}) {
    port = free_port();
    std::vector<std::string> argv = {TGW_BINARY,
                                     "serve",
                                     "--port",
                                     std::to_string(port),
                                     "--bind",
                                     "127.0.0.1",
                                     "--redis",
                                     redis_url(),
                                     "--metrics-addr",
                                     "",
                                     "--instance-id",
                                     instance,
                                     "--heartbeat-interval-ms",
                                     "200",
                                     "--janitor-interval-ms",
                                     "300",
                                     "--command-timeout-ms",
                                     "1000",
                                     "--log-level",
                                     "debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    gateway.emplace(argv, ::testing::TempDir() + "/commands-gateway.log");
    ASSERT_TRUE(eventually([&] { return device(port).connected(); })) << "gateway did not start";
  }
  std::string redis_url() const { return backend.url(); }
  /// `tgw command send --json` to `imei` with `args`, running while the test plays the
  /// device.
  std::future<run_result> send_json(const std::string& imei, const std::string& args) {
    return std::async(std::launch::async, [this, imei, args] {
      return run_tgw("command send --json --redis " + redis_url() + " --imei " + imei + " " + args);
    });
  }
  /// The outcome `send --json` printed (its last line of JSON).
  static nlohmann::json outcome_of(const run_result& r) {
    const auto at = r.out.rfind('{');
    return nlohmann::json::parse(at == std::string::npos ? "" : r.out.substr(at), nullptr, false);
  }

  /// Every response published for `command_id` (in any shard).
  std::vector<command_response> responses(const std::string& command_id) {
    std::vector<command_response> out;
    for (const auto& stream : backend.in_every_shard(infra::commands::keys::responses)) {
      const auto all = redis.command({"XRANGE", stream, "-", "+"});
      for (const auto& entry : all.elements) {
        std::map<std::string, std::string> f;
        const auto& kv = entry.elements.at(1).elements;
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2) f[kv[i].text] = kv[i + 1].text;
        if (f["command_id"] != command_id) continue;
        out.push_back({entry.elements.at(0).text, f["command_id"], f["status"], f["response"],
                       f["failure_reason"], 0, f["imei"], f["response_hex"]});
      }
    }
    return out;
  }
  /// The instance's outbound stream in the shard of `imei`.
  std::string outbound(const std::string& instance, const std::string& imei) const {
    return infra::commands::keys::outbound(instance, backend.prefix(imei));
  }
  std::string owner_of(const std::string& imei) {
    return redis.command({"HGET", backend.prefix(imei) + "connections:registry", imei}).text;
  }
  /// How many of the instance's keys named `name` + instance exist, over every shard.
  std::int64_t existing(const std::string& name, const std::string& instance) {
    std::int64_t n = 0;
    for (const auto& key : backend.in_every_shard(name + instance))
      n += redis.command({"EXISTS", key}).integer;
    return n;
  }
  /// Waits for the first response to `command_id`; then checks no second one follows.
  std::optional<command_response> single_response(const std::string& command_id) {
    if (!eventually([&] { return !responses(command_id).empty(); })) return std::nullopt;
    std::this_thread::sleep_for(300ms);
    const auto all = responses(command_id);
    EXPECT_EQ(all.size(), 1U) << "command " << command_id << " answered " << all.size() << " times";
    return all.front();
  }
  /// XADD straight into an instance's stream, as a publisher would.
  void add_entry(const std::string& instance, std::vector<std::string> fields) {
    std::string target;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2)
      if (fields[i] == "target_imei") target = fields[i + 1];
    std::vector<std::string> argv = {"XADD", outbound(instance, target), "*"};
    argv.insert(argv.end(), fields.begin(), fields.end());
    ASSERT_FALSE(redis.command(argv).is_error());
  }
  std::int64_t stream_length(const std::string& instance) {
    std::int64_t n = 0;
    for (const auto& key : backend.in_every_shard("commands:outbound:" + instance))
      n += redis.command({"XLEN", key}).integer;
    return n;
  }
  infra::commands::publish_result publish(const std::string& imei, const std::string& text,
                                          int codec = 12, bool queue_if_offline = false) {
    std::string error;
    auto r = publisher.publish(imei, text, codec, 300s, queue_if_offline, error);
    EXPECT_TRUE(r.has_value()) << error;
    return r.value_or(infra::commands::publish_result{});
  }

  redis_server& server() { return *backend.server(); }

  redis_backend backend;
  infra::redis::connection redis = backend.connect();
  infra::commands::command_publisher publisher{
      {backend.endpoint(), 1000ms, 3000ms, "publisher"}, 1000ms, backend.shards()};
  std::uint16_t port = 0;
  std::optional<child_process> gateway;
};

TEST_F(Commands, AnEntryIsWrittenToTheRightSessionAndItsAnswerPublishedThenAcked) {
  start();
  tracker a(port, imei_a);
  tracker b(port, imei_b);
  ASSERT_TRUE(a.accepted && b.accepted);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  const auto sent = publish(imei_a, "getinfo");
  ASSERT_EQ(sent.status, "sent");
  EXPECT_EQ(a.receive_command(), "getinfo");
  EXPECT_EQ(a.last_codec, 0x0C);
  a.answer("RTC:2026/11/22");
  const auto r = single_response(sent.command_id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, "responded");
  EXPECT_EQ(r->response, "RTC:2026/11/22");
  // Acknowledged and removed in the same step as the publish.
  EXPECT_EQ(stream_length("gwA"), 0);
  EXPECT_EQ(redis.command({"XPENDING", outbound("gwA", imei_a), "ingest"}).elements.at(0).integer,
            0);
  EXPECT_FALSE(b.socket.receive(1).has_value()) << "the other device got a command";
  // Every stage of the command is journaled in order: published, dispatched, resolved.
  std::vector<std::string> types;
  for (const auto& e :
       redis.command({"XRANGE", backend.prefix(imei_a) + "journal:" + imei_a, "-", "+"}).elements)
    types.push_back(e.elements.at(1).elements.at(1).text);
  EXPECT_EQ(types, (std::vector<std::string>{"identified", "command_published",
                                             "command_dispatched", "command_resolved"}));
}

TEST_F(Commands, Codec14GoesOutWithTheDeviceImei) {
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  const auto sent = publish(imei_a, "getver", 14);
  EXPECT_EQ(a.receive_command(), "getver");
  EXPECT_EQ(a.last_codec, 0x0E);
}

TEST_F(Commands, ADeviceNotHeldGetsSocketClosedAndTheEntryIsAcked) {
  start();
  add_entry("gwA", {"command_id", "c-absent", "target_imei", imei_b, "codec", "12", "payload",
                    "getinfo", "expires_at", "0"});
  const auto r = single_response("c-absent");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, "failed");
  EXPECT_EQ(r->failure_reason, "socket_closed");
  EXPECT_EQ(stream_length("gwA"), 0);
}

TEST_F(Commands, AnExpiredEntryIsNotDelivered) {
  start();
  tracker a(port, imei_a);
  add_entry("gwA", {"command_id", "c-old", "target_imei", imei_a, "codec", "12", "payload",
                    "getinfo", "expires_at", "1000"});
  const auto r = single_response("c-old");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->failure_reason, "expired_before_delivery");
  EXPECT_FALSE(a.socket.receive(1).has_value());
}

TEST_F(Commands, AMalformedEntryFailsWithTheReasonNamingTheProblem) {
  start();
  add_entry("gwA", {"command_id", "c-bad", "target_imei", imei_a, "codec", "13", "payload", "x"});
  const auto r = single_response("c-bad");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, "failed");
  EXPECT_NE(r->failure_reason.find("codec"), std::string::npos) << r->failure_reason;
}

TEST_F(Commands, ASilentDeviceTimesOut) {
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  const auto sent = publish(imei_a, "getinfo");
  EXPECT_EQ(a.receive_command(), "getinfo");
  const auto r = single_response(sent.command_id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->failure_reason, "timeout");
}

TEST_F(Commands, PendingEntriesAreReReadAfterARestart) {
  // A previous incarnation of gwA read this entry and died before answering it.
  const std::string stream = outbound("gwA", imei_b);
  ASSERT_FALSE(redis.command({"XGROUP", "CREATE", stream, "ingest", "0", "MKSTREAM"}).is_error());
  add_entry("gwA", {"command_id", "c-pending", "target_imei", imei_b, "codec", "12", "payload",
                    "getinfo", "expires_at", "0"});
  ASSERT_EQ(redis.command({"XREADGROUP", "GROUP", "ingest", "gwA", "STREAMS", stream, ">"})
                .elements.size(),
            1U);
  start();
  const auto r = single_response("c-pending");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->failure_reason, "socket_closed");  // the device is not connected here
}

TEST_F(Commands, ADeadInstancesCommandsEachGetExactlyOneTerminalResponse) {
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  // gwDead has no heartbeat; its stream holds a read-but-unanswered entry for a device
  // now on gwA, an unread one for a device connected nowhere, and an expired one.
  const std::string dead = outbound("gwDead", imei_a);
  // One stream on a single node; on a cluster the devices may be in two shards.
  for (const std::string& stream : std::set<std::string>{dead, outbound("gwDead", imei_b)})
    ASSERT_FALSE(redis.command({"XGROUP", "CREATE", stream, "ingest", "0", "MKSTREAM"}).is_error());
  add_entry("gwDead", {"command_id", "d-moved", "target_imei", imei_a, "codec", "12", "payload",
                       "getinfo", "expires_at", "0"});
  ASSERT_EQ(redis.command({"XREADGROUP", "GROUP", "ingest", "gwDead", "STREAMS", dead, ">"})
                .elements.size(),
            1U);
  add_entry("gwDead", {"command_id", "d-lost", "target_imei", imei_b, "codec", "12", "payload",
                       "getinfo", "expires_at", "0"});
  add_entry("gwDead", {"command_id", "d-old", "target_imei", imei_b, "codec", "12", "payload",
                       "getinfo", "expires_at", "1000"});
  for (const std::string imei : {imei_a, imei_b})
    ASSERT_FALSE(
        redis.command({"SADD", backend.prefix(imei) + "commands:instances", "gwDead"}).is_error());

  EXPECT_EQ(a.receive_command(), "getinfo");  // re-routed to the device's live owner
  a.answer("moved ok");
  const auto moved = single_response("d-moved");
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->status, "responded");
  const auto lost = single_response("d-lost");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->failure_reason, "instance_lost");
  const auto old = single_response("d-old");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->failure_reason, "expired_before_delivery");
  EXPECT_TRUE(eventually([&] { return existing("commands:outbound:", "gwDead") == 0; }));
}

TEST_F(Commands, AnOfflineQueueIsDeliveredInOrderWhenTheDeviceConnects) {
  start();
  const auto first = run_tgw("command send --redis " + redis_url() + " --imei " + imei_a +
                             " --text first --queue-if-offline --timeout 1s");
  EXPECT_EQ(first.exit_code, 3) << first.out;
  const auto second = publish(imei_a, "second", 12, true);
  EXPECT_EQ(second.status, "queued");
  tracker a(port, imei_a);
  EXPECT_EQ(a.receive_command(), "first");
  a.answer("1");
  EXPECT_EQ(a.receive_command(), "second");
  a.answer("2");
  const auto r = single_response(second.command_id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->response, "2");
}

TEST_F(Commands, TgwCommandSendPrintsTheAnswerAndExitsZero) {
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  auto sent = std::async(std::launch::async, [&] {
    return run_tgw("command send --redis " + redis_url() + " --imei " + imei_a +
                   " --text getgps --timeout 5s");
  });
  EXPECT_EQ(a.receive_command(), "getgps");
  a.answer("GPS:1");
  const auto result = sent.get();
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("responded: GPS:1"), std::string::npos) << result.out;
}

// A device may answer with any bytes (a binary reply to getrs232): they are kept
// exactly in response_hex, response holds only text, and the CLI prints them escaped,
// in JSON as ASCII, never a raw control byte. The same for a Codec 14 ACK's payload.
TEST_F(Commands, ABinaryReplyIsKeptAsBytesAndPrintedSafely) {
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  const std::string binary("\xC5\x01\x1B[2J\xFF\x00Z", 9);
  for (const auto codec : {codecs::codec_id::codec12, codecs::codec_id::codec14}) {
    const int number = codec == codecs::codec_id::codec12 ? 12 : 14;
    SCOPED_TRACE("Codec " + std::to_string(number));
    auto sent = send_json(imei_a, "--text getrs232 --timeout 5s --codec " + std::to_string(number));
    EXPECT_EQ(a.receive_command(), "getrs232");
    a.answer(binary, codec);
    const auto result = sent.get();
    EXPECT_EQ(result.exit_code, 0) << result.out;
    EXPECT_EQ(result.out.find('\x1B'), std::string::npos) << "a raw ESC reached the terminal";
    const auto out = outcome_of(result);
    EXPECT_EQ(out["status"], "responded");
    EXPECT_TRUE(out["response"].is_null());
    EXPECT_EQ(out["response_hex"], "C5011B5B324AFF005A");
    // As stored: no response field (the bytes are no text), the bytes exactly.
    std::string command_id = out["command_id"].get<std::string>();
    const auto r = single_response(command_id);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->response, "");
    EXPECT_EQ(r->response_hex, "C5011B5B324AFF005A");
  }
  // Text stays text, with its bytes beside it.
  auto text = std::async(std::launch::async, [&] {
    return run_tgw("command send --redis " + redis_url() + " --imei " + imei_a +
                   " --text getver --timeout 5s");
  });
  EXPECT_EQ(a.receive_command(), "getver");
  a.answer("Ver:03.28\r\n\x1B[31m");
  const auto shown = text.get();
  EXPECT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_NE(shown.out.find("responded: Ver:03.28\\x0d\\x0a\\x1b[31m"), std::string::npos)
      << shown.out;
  EXPECT_EQ(shown.out.find('\x1B'), std::string::npos);
  // The journal keeps the bytes too.
  bool journaled = false;
  for (const auto& e :
       redis.command({"XRANGE", backend.prefix(imei_a) + "journal:" + imei_a, "-", "+"}).elements) {
    const auto& kv = e.elements.at(1).elements;
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2)
      journaled |= kv[i].text == "response_hex" && kv[i + 1].text == "C5011B5B324AFF005A";
  }
  EXPECT_TRUE(journaled);
}

// An IMEISV's 16 digits pass the handshake, and `tgw command send` takes them too, in
// Codec 12 and in Codec 14 (whose 8-byte BCD IMEI holds 16 digits exactly).
TEST_F(Commands, ADeviceOf16DigitsGetsCommandsInBothCodecs) {
  start();
  constexpr const char* imeisv = "3563070424410134";
  tracker a(port, imeisv);
  ASSERT_TRUE(a.accepted);
  ASSERT_TRUE(eventually([&] { return owner_of(imeisv) == "gwA"; }));
  for (const auto codec : {codecs::codec_id::codec12, codecs::codec_id::codec14}) {
    const int number = codec == codecs::codec_id::codec12 ? 12 : 14;
    SCOPED_TRACE("Codec " + std::to_string(number));
    auto sent = send_json(imeisv, "--text getver --timeout 5s --codec " + std::to_string(number));
    EXPECT_EQ(a.receive_command(), "getver");
    EXPECT_EQ(a.last_codec, static_cast<std::uint8_t>(codec));
    a.answer("Ver:03.28", codec);
    const auto result = sent.get();
    EXPECT_EQ(result.exit_code, 0) << result.out;
    const auto out = outcome_of(result);
    ASSERT_TRUE(out.is_object()) << result.out;
    EXPECT_EQ(out["imei"], imeisv);
    EXPECT_EQ(out["status"], "responded");
    EXPECT_EQ(out["response"], "Ver:03.28");
  }
}

// A device may answer with nothing at all: the command responded, with an empty reply,
// which JSON readers get as "" (a reply of no bytes), not null (no reply).
TEST_F(Commands, AnEmptyReplyIsAnEmptyStringNotNull) {
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  auto sent = send_json(imei_a, "--text setdigout --timeout 5s");
  EXPECT_EQ(a.receive_command(), "setdigout");
  a.answer("");
  const auto result = sent.get();
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const auto out = outcome_of(result);
  ASSERT_TRUE(out.is_object()) << result.out;
  EXPECT_EQ(out["status"], "responded");
  EXPECT_EQ(out["response"], "");
  EXPECT_EQ(out["response_hex"], "");
  const std::string command_id = out["command_id"].get<std::string>();
  // The same in the device's command history.
  const auto history =
      run_tgw("command history --json --redis " + redis_url() + " --imei " + imei_a);
  ASSERT_EQ(history.exit_code, 0) << history.out;
  const auto listed = nlohmann::json::parse(history.out, nullptr, false);
  bool found = false;
  for (const auto& c : listed.is_object() ? listed.value("commands", nlohmann::json::array())
                                          : nlohmann::json::array()) {
    if (c["command_id"] != command_id) continue;
    found = true;
    EXPECT_EQ(c["response"], "");
    EXPECT_EQ(c["response_hex"], "");
  }
  EXPECT_TRUE(found) << history.out;
}

TEST_F(Commands, SigtermFailsTheCommandInFlightWithSocketClosedAndExitsZero) {
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  const auto sent = publish(imei_a, "getinfo");
  EXPECT_EQ(a.receive_command(), "getinfo");
  gateway->signal(SIGTERM);
  EXPECT_EQ(gateway->wait(), 0);
  const auto r = single_response(sent.command_id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->failure_reason, "socket_closed");
  // The instance left the command path: no heartbeat, no stream.
  EXPECT_EQ(existing("instance:heartbeat:", "gwA"), 0);
  EXPECT_EQ(existing("commands:outbound:", "gwA"), 0);
}

// Redis keeps what it acknowledged across the restart (AOF, fsync always).
class CommandsAcrossARedisRestart : public Commands {
 protected:
  CommandsAcrossARedisRestart() : Commands(true) {}
};

TEST_F(CommandsAcrossARedisRestart, AnAnswerGivenWhileRedisIsDownIsPublishedOnceItReturns) {
  if (backend.on_cluster()) GTEST_SKIP() << "a node outage on a cluster is a failover test";
  start();
  tracker a(port, imei_a);
  ASSERT_TRUE(eventually([&] { return owner_of(imei_a) == "gwA"; }));
  const auto sent = publish(imei_a, "getinfo");
  EXPECT_EQ(a.receive_command(), "getinfo");
  server().stop();
  a.answer("answered during the outage");
  std::this_thread::sleep_for(500ms);
  server().start();
  const auto r = single_response(sent.command_id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, "responded");
  EXPECT_EQ(r->response, "answered during the outage");
  EXPECT_EQ(stream_length("gwA"), 0);
  // The reader is back too: a new command goes through. (The publisher's own
  // connection broke with the restart; its first call reports that, the next reconnects.)
  std::string error;
  ASSERT_TRUE(eventually([&] {
    return publisher.publish(imei_a, "getver", 12, 300s, false, error).has_value();
  })) << error;
  EXPECT_EQ(a.receive_command(), "getver");
}

}  // namespace
}  // namespace tgw::test
