#include "infra/cli/replay_command.hpp"

#include <iostream>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>

#include "codecs/imei.hpp"
#include "infra/capture/capture_loader.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/cli/value_checks.hpp"
#include "infra/log/log.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/replay/live_replay.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra {
namespace {

struct replay_options {
  std::vector<std::string> captures;
  bool offline = false;
  std::string to;
  double speed = 1.0;
  std::uint16_t device_port = 5027;
  int answer_timeout_ms = 5000;
  std::string crc = "strict";
  std::size_t max_frame_size = std::size_t{16} * 1024;
  bool quiet = false;
  bool force = false;
  redis_choice redis;
};

// The IMEIs of the capture's handshakes.
std::set<std::string> devices_of(const capture::capture_set& capture) {
  std::set<std::string> imeis;
  for (const auto& c : capture.connections)
    for (const auto& chunk : c.chunks) {
      if (!chunk.from_device) continue;
      codecs::imei id;
      if (codecs::parse_imei_packet(chunk.bytes, id).ok()) imeis.insert(std::string(id.str()));
      break;
    }
  return imeis;
}

// A gateway recognises only a device's last accepted packet as a resend, so replaying
// a capture into the Redis that already stored it stores every earlier packet again.
// Refuses (false) when the target's Redis already knows any of the capture's devices;
// warns and goes on when that Redis cannot be found.
bool target_is_fresh(const replay_options& o, const capture::capture_set& capture) {
  const auto imeis = devices_of(capture);
  if (imeis.empty()) return true;
  std::string error;
  bool usage = false;
  const auto where = resolve_redis(o.redis, error, usage);
  if (!where) {
    std::cerr << "tgw replay: cannot check whether the target already holds these devices ("
              << error << "); going on\n";
    return true;
  }
  redis::connection conn(
      {*where, std::chrono::milliseconds{2000}, std::chrono::milliseconds{5000}, "tgw-replay"});
  // On a cluster the device keys are in key shards; none agreed yet: nothing is held.
  bool none_stored = false;
  const auto shards = redis::read_key_shards(conn, error, &none_stored);
  if (!shards) {
    if (none_stored) return true;
    std::cerr << "tgw replay: cannot check whether the target already holds these devices ("
              << error << "); going on\n";
    return true;
  }
  std::vector<std::vector<std::string>> probes;
  for (const auto& imei : imeis)
    probes.push_back({"EXISTS", telemetry::keys::device(imei, shards->prefix_of(imei))});
  const auto replies = conn.pipeline(probes);
  std::vector<std::string> known;
  auto it = imeis.begin();
  for (const auto& r : replies) {
    if (r.is_error()) {
      std::cerr << "tgw replay: cannot check whether the target already holds these devices ("
                << r.text << "); going on\n";
      return true;
    }
    if (r.integer == 1) known.push_back(*it);
    ++it;
  }
  if (known.empty()) return true;
  std::cerr << "tgw replay: the Redis at " << where->describe() << " already holds " << known.size()
            << " of the capture's " << imeis.size() << " devices (" << known.front()
            << (known.size() > 1 ? ", ..." : "")
            << "): replaying would store their records again, since a gateway recognises only "
               "a device's last packet as a resend. Replay into a fresh gateway, or pass "
               "--force\n";
  return false;
}

bool split_host_port(const std::string& text, std::string& host, std::uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  try {
    const unsigned long p = std::stoul(text.substr(colon + 1));
    if (p == 0 || p > 65535) return false;
    port = static_cast<std::uint16_t>(p);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

constexpr int exit_target_holds_devices = 3;

int run_replay(const replay_options& o, const replay::offline_runner& offline) {
  std::string host;
  std::uint16_t port = 0;
  if (o.offline == !o.to.empty()) {
    std::cerr << "tgw replay: give exactly one of --offline and --to HOST:PORT\n";
    return 2;
  }
  if (!o.to.empty() && !split_host_port(o.to, host, port)) {
    std::cerr << "tgw replay: --to wants HOST:PORT, got '" << o.to << "'\n";
    return 2;
  }
  const capture::capture_set capture = capture::load_captures(o.captures, o.device_port);
  for (const auto& e : capture.errors) std::cerr << "capture error: " << e << '\n';
  if (!o.offline && !o.force && !target_is_fresh(o, capture)) return exit_target_holds_devices;

  std::vector<replay::connection_report> reports;
  if (o.offline) {
    replay::offline_settings settings;
    settings.crc = o.crc == "ignore" ? codecs::crc_policy::ignore : codecs::crc_policy::strict;
    settings.max_frame_size = o.max_frame_size;
    auto result = offline(capture, settings);
    for (const auto& e : result.events) std::cout << replay::to_json_line(e) << '\n';
    std::cout.flush();
    reports = std::move(result.reports);
  } else {
    replay::live_settings settings;
    settings.host = host;
    settings.port = port;
    settings.speed = o.speed;
    settings.answer_timeout = std::chrono::milliseconds{o.answer_timeout_ms};
    if (!o.quiet)
      settings.progress = [](std::size_t done, std::size_t total) {
        std::cerr << "replay: " << done << " of " << total << " connections done\n";
      };
    reports = replay::replay_live(capture, settings);
  }
  std::size_t differing = 0;
  for (const auto& r : reports) {
    if (!r.as_recorded()) ++differing;
    if (!o.quiet || !r.as_recorded()) std::cerr << replay::describe(r) << '\n';
  }
  std::cerr << capture.packets << " packets, " << reports.size() << " connections, "
            << reports.size() - differing << " as recorded, " << differing << " differing, "
            << capture.errors.size() << " capture errors\n";
  return differing == 0 && capture.errors.empty() ? 0 : 1;
}

}  // namespace

void add_replay_command(CLI::App& app, const replay::offline_runner& offline, int& exit_code) {
  auto o = std::make_shared<replay_options>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Replay recorded device traffic (pcap or pcapng, e.g. from `tgw serve --capture-dir`\n"
      "or tcpdump). --offline runs it through the gateway's session logic with a virtual\n"
      "clock and prints the journal events as JSON lines; --to HOST:PORT re-enacts the\n"
      "devices against a gateway, after checking that the gateway's Redis (--redis, else\n"
      "found as by the client commands) does not hold the capture's devices yet. A\n"
      "per-connection report goes to stderr. Exit code: 0 all connections answered as\n"
      "recorded, 1 a difference or a capture error, 2 usage, 3 the target already holds\n"
      "the devices (--force replays anyway).");
  cmd->add_option("captures", o->captures,
                  "Capture files, read in this order as one capture (a rotated set in name "
                  "order)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--offline", o->offline, "No sockets, no Redis: print the event sequence")
      ->envname("TGW_REPLAY_OFFLINE");
  cmd->add_option("--to", o->to, "HOST:PORT of a gateway to replay the devices against")
      ->envname("TGW_REPLAY_TO");
  cmd->add_option("--speed", o->speed,
                  "Replay this many times faster than recorded; 0: as fast as the answers "
                  "allow (--to)")
      ->envname("TGW_REPLAY_SPEED")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--device-port", o->device_port,
                  "Port devices connect to, when no IMEI handshake shows which side is the "
                  "device")
      ->envname("TGW_REPLAY_DEVICE_PORT")
      ->capture_default_str();
  cmd->add_option("--answer-timeout-ms", o->answer_timeout_ms,
                  "How long a replayed device waits for each recorded answer (--to)")
      ->envname("TGW_REPLAY_ANSWER_TIMEOUT_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--crc", o->crc, "strict or ignore, as `tgw serve --crc` (--offline)")
      ->envname("TGW_REPLAY_CRC")
      ->check(CLI::IsMember({"strict", "ignore"}))
      ->capture_default_str();
  cmd->add_option("--max-frame-size", o->max_frame_size,
                  "As `tgw serve --max-frame-size` (--offline)")
      ->envname("TGW_REPLAY_MAX_FRAME_SIZE")
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 20))
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "Report only connections that differ")
      ->envname("TGW_REPLAY_QUIET");
  cmd->add_flag("--force", o->force,
                "--to: replay even into a Redis that already holds the capture's devices "
                "(their packets before the last one are stored again)")
      ->envname("TGW_REPLAY_FORCE");
  add_redis_options(cmd, o->redis);
  cmd->callback([o, offline, &exit_code] {
    // The session logic logs as in a live gateway; replay output is the events.
    setup_logging("off", "text");
    exit_code = run_replay(*o, offline);
  });
}

}  // namespace tgw::infra
