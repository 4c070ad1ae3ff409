#include "infra/app/run_offline_replay.hpp"

#include <algorithm>
#include <memory>

#include <caf/all.hpp>

#include "actors/gateway/gateway_atoms.hpp"
#include "actors/gateway/session.hpp"
#include "actors/gateway/telemetry_writer.hpp"
#include "codecs/device_conversation.hpp"
#include "codecs/imei.hpp"
#include "infra/app/replay_scheduler.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/telemetry/memory_telemetry_store.hpp"

namespace tgw::infra::app {
namespace {

using capture::close_cause;
using capture::recorded_connection;
using replay::replay_event;

struct replay_config : caf::actor_system_config {
  replay_config() {
    // Actors run only when the replay says so, one message at a time, in a fixed
    // order (replay_scheduler.hpp).
    use_replay_scheduler(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

// What the session sees of its connection: writes and a close request are kept, to
// compare with the recording and to stop feeding the connection.
class replay_link final : public ports::device_link {
 public:
  explicit replay_link(std::string peer) : peer_(std::move(peer)) {}
  void send(std::vector<std::uint8_t> bytes) override {
    sent.insert(sent.end(), bytes.begin(), bytes.end());
  }
  void close(std::string reason) override {
    if (close_reason.empty()) close_reason = std::move(reason);
  }
  void frame_done() override {}
  [[nodiscard]] std::string peer() const override { return peer_; }

  std::vector<std::uint8_t> sent;
  std::string close_reason;

 private:
  std::string peer_;
};

// The peer text as the live server writes it (address, colon, port; no brackets for
// IPv6), so `identified.peer` matches the live journal.
std::string live_peer_text(const net::ip_endpoint& e) {
  std::string text = e.to_string();
  if (e.v6) {
    const auto close = text.rfind("]:");
    text = text.substr(1, close - 1) + text.substr(close + 1);
  }
  return text;
}

std::string reason_of(close_cause c) {
  switch (c) {
    case close_cause::device_fin:
      return "peer closed";
    case close_cause::device_rst:
      return "read failed: Connection reset by peer";
    case close_cause::gateway_fin:
    case close_cause::gateway_rst:
      return "closed by the gateway (recorded)";
    case close_cause::none:
      break;
  }
  return "capture ended";
}

struct connection_run {
  const recorded_connection* rec = nullptr;
  std::shared_ptr<replay_link> link;
  codecs::tcp_framer framer;
  codecs::inbound_guard guard;
  actors::gateway::session_actor session;
  bool closed = false;
  std::vector<std::uint8_t> recorded_answers;
};

// One step of the merged timeline: a chunk of a connection, or its recorded close.
struct step {
  std::uint64_t order = 0;
  int is_close = 0;  // a FIN's data comes before the FIN
  std::size_t connection = 0;
  std::size_t chunk = 0;
  auto key() const { return std::tie(order, is_close, connection, chunk); }
};

}  // namespace

replay::offline_result run_offline_replay(const capture::capture_set& capture,
                                          const replay::offline_settings& settings) {
  replay_config cfg;
  caf::actor_system sys{cfg};

  std::int64_t now_ms = 0;
  auto store = std::make_shared<telemetry::memory_telemetry_store>(settings.instance,
                                                                   [&now_ms] { return now_ms; });
  auto counters = std::make_shared<metrics::gateway_counters>();
  auto writer = sys.spawn(actors::gateway::telemetry_writer, actors::gateway::writer_config{},
                          std::shared_ptr<ports::telemetry_store>(store), 0, counters);
  auto config = std::make_shared<actors::gateway::session_config>();
  config->instance_id = settings.instance;
  config->crc = settings.crc;
  config->counters = counters;
  config->writers.push_back(writer);
  std::shared_ptr<const actors::gateway::session_config> shared_config = config;

  std::vector<connection_run> runs;
  runs.reserve(capture.connections.size());
  std::vector<step> timeline;
  for (std::size_t i = 0; i < capture.connections.size(); ++i) {
    const recorded_connection& rec = capture.connections[i];
    runs.push_back(connection_run{&rec,
                                  std::make_shared<replay_link>(live_peer_text(rec.device)),
                                  codecs::tcp_framer(settings.max_frame_size, true),
                                  codecs::inbound_guard{},
                                  actors::gateway::session_actor{},
                                  false,
                                  {}});
    for (std::size_t c = 0; c < rec.chunks.size(); ++c) {
      timeline.push_back(step{rec.chunks[c].order, 0, i, c});
      if (!rec.chunks[c].from_device)
        runs[i].recorded_answers.insert(runs[i].recorded_answers.end(), rec.chunks[c].bytes.begin(),
                                        rec.chunks[c].bytes.end());
    }
    if (rec.closed != close_cause::none) timeline.push_back(step{rec.closed_order, 1, i, 0});
  }
  std::sort(timeline.begin(), timeline.end(),
            [](const step& a, const step& b) { return a.key() < b.key(); });

  auto close_session = [&](connection_run& run, const std::string& reason) {
    if (run.closed) return;
    run.closed = true;
    if (run.session) {
      caf::anon_send(run.session, actors::gateway::closed_atom::value, reason);
      run_until_idle(sys);
    }
  };
  // A close the session asked for ends the connection, as the server's shutdown does.
  auto honour_close = [&](connection_run& run) {
    if (!run.closed && !run.link->close_reason.empty()) close_session(run, run.link->close_reason);
  };

  std::int64_t last_ms = 0;
  for (const step& s : timeline) {
    connection_run& run = runs[s.connection];
    if (s.is_close == 1) {
      now_ms = run.rec->closed_us / 1000;
      last_ms = std::max(last_ms, now_ms);
      close_session(run, reason_of(run.rec->closed));
      continue;
    }
    const auto& chunk = run.rec->chunks[s.chunk];
    now_ms = chunk.unix_us / 1000;
    last_ms = std::max(last_ms, now_ms);
    if (!chunk.from_device || run.closed) continue;
    if (!run.session) run.session = sys.spawn(actors::gateway::session, run.link, shared_config);
    run.framer.append(chunk.bytes);
    // The same loop as the server's read handler: every complete frame, in order,
    // until the buffer holds only part of one or the stream is broken.
    for (;;) {
      const codecs::frame_result r = run.framer.next();
      if (r.status.code == codecs::errc::need_more) break;
      if (!r.status.ok()) {
        run.link->close("framing error: " + std::string(codecs::to_string(r.status.code)) +
                        " at stream offset " + std::to_string(r.status.offset));
        break;
      }
      // The same rules as the server's: the IMEI first, keepalives counted where they
      // arrive. The replay delivers every frame at once, so none waits in flight.
      const codecs::frame_verdict verdict = run.guard.on_frame(r.value.kind);
      if (verdict == codecs::frame_verdict::keepalive) {
        counters->keepalives.fetch_add(1);
        continue;
      }
      if (verdict == codecs::frame_verdict::before_imei) {
        run.link->close(std::string(codecs::before_imei_reason));
        break;
      }
      run.guard.frame_done();
      caf::anon_send(run.session, actors::gateway::frame_atom::value,
                     static_cast<std::uint8_t>(r.value.kind), r.value.codec,
                     std::vector<std::uint8_t>(r.value.bytes.begin(), r.value.bytes.end()));
    }
    run_until_idle(sys);
    honour_close(run);
  }
  // Connections still open when the capture ends close at its last moment.
  now_ms = last_ms;
  for (auto& run : runs) close_session(run, "capture ended");
  run_until_idle(sys);

  replay::offline_result result;
  for (const auto& entry : store->journal()) {
    replay_event e;
    e.imei = entry.imei;
    for (const auto& [k, v] : entry.fields) {
      if (k == "at_ms")
        e.t_ms = std::stoll(v);
      else if (k != "instance")
        e.fields.emplace_back(k, v);
    }
    result.events.push_back(std::move(e));
  }
  for (auto& run : runs) {
    replay::connection_report r;
    r.number = run.rec->number;
    r.device = run.rec->device.to_string();
    codecs::imei id;
    const auto& chunks = run.rec->chunks;
    const auto first =
        std::find_if(chunks.begin(), chunks.end(), [](const auto& c) { return c.from_device; });
    if (first != chunks.end() && codecs::parse_imei_packet(first->bytes, id).ok())
      r.imei = std::string(id.str());
    r.recorded = replay::read_answers(run.recorded_answers);
    r.replayed = replay::read_answers(run.link->sent);
    r.bytes_equal =
        replay::without_commands(run.recorded_answers) == replay::without_commands(run.link->sent);
    r.problems = run.rec->problems;
    result.reports.push_back(std::move(r));
    if (run.session) caf::anon_send_exit(run.session, caf::exit_reason::user_shutdown);
  }
  caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
  run_until_idle(sys);
  return result;
}

}  // namespace tgw::infra::app
