#include "infra/cli/simulate_command.hpp"
#include "infra/cli/log_options.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "infra/log/log.hpp"
#include "infra/process/cpu_policy.hpp"
#include "infra/sim/fleet.hpp"

namespace tgw::infra {
namespace {

using std::chrono::milliseconds;

struct simulate_settings {
  sim::fleet_options fleet;  // Fields without a text form are set directly.
  std::string codec = "8E";
  std::string transport = "tcp";
  std::string target = "127.0.0.1:5027";
  std::string send_interval = "1s";
  std::string send_period = "0s";
  std::string ramp_up = "0s";
  std::string duration = "0s";
  std::string ack_timeout = "5s";
  std::string reconnect_delay = "1s";
  std::string reconnect_max_delay = "30s";
  std::int64_t reply_delay_ms = 0;
  bool quiet = false;
  bool json = false;
  std::string progress_log;
  std::string cpu_policy = "batch";
  std::string log_level = "warn";
  std::string log_format = "text";
};

CLI::Validator duration_text() {
  return {[](std::string& text) {
            return sim::parse_duration(text)
                       ? std::string{}
                       : "'" + text + "' is not a duration (250ms, 5s, 2m, 1h)";
          },
          "DURATION"};
}

CLI::Validator target_text() {
  return {[](std::string& text) {
            std::string host;
            std::uint16_t port = 0;
            return sim::parse_target(text, host, port) ? std::string{}
                                                       : "'" + text + "' is not host:port";
          },
          "HOST:PORT"};
}

// Fills the fleet options from the text flags; CLI11 has checked each one already.
std::string complete_options(simulate_settings& s) {
  sim::fleet_options& o = s.fleet;
  o.codec = *sim::parse_avl_codec(s.codec);
  o.transport = s.transport == "udp" ? sim::transport_kind::udp : sim::transport_kind::tcp;
  if (!sim::parse_target(s.target, o.target_host, o.target_port)) return "bad --target";
  o.send_interval = *sim::parse_duration(s.send_interval);
  o.send_period = *sim::parse_duration(s.send_period);
  o.ramp_up = *sim::parse_duration(s.ramp_up);
  o.duration = *sim::parse_duration(s.duration);
  o.ack_timeout = *sim::parse_duration(s.ack_timeout);
  o.reconnect_delay = *sim::parse_duration(s.reconnect_delay);
  o.reconnect_max_delay = *sim::parse_duration(s.reconnect_max_delay);
  o.reply_delay = milliseconds{s.reply_delay_ms};
  return sim::validate(o);
}

// SIGINT/SIGTERM are blocked in every thread (main() does it first), so they wait
// here until taken; 0 when none arrived within `timeout`.
int take_termination_signal(milliseconds timeout) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec ts{};
  ts.tv_sec = static_cast<std::time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000) * 1'000'000L;
  const int signal = sigtimedwait(&set, nullptr, &ts);
  return signal > 0 ? signal : 0;
}

int run_simulate(simulate_settings& s) {
  setup_logging(s.log_level, s.log_format);
  if (const std::string error = complete_options(s); !error.empty()) {
    std::cerr << "tgw simulate: " << error << '\n';
    return 2;
  }
  const sim::fleet_options& o = s.fleet;
  if (const std::string error = sim::ensure_file_limit(o.count); !error.empty()) {
    std::cerr << "tgw simulate: " << error << '\n';
    return 2;
  }

  std::ofstream progress_log;
  if (!s.progress_log.empty()) {
    progress_log.open(s.progress_log, std::ios::out | std::ios::trunc);
    if (!progress_log) {
      std::cerr << "tgw simulate: cannot write the progress log " << s.progress_log << '\n';
      return 2;
    }
  }

  // Before the fleet's threads start, so that they inherit it.
  if (const std::string error = process::apply_cpu_policy(
          process::parse_cpu_policy(s.cpu_policy).value_or(process::cpu_policy::keep));
      !error.empty())
    spdlog::warn("simulate: {}; going on with the current one", error);

  sim::fleet fleet(o);
  try {
    fleet.start();
  } catch (const std::exception& e) {
    std::cerr << "tgw simulate: cannot start towards " << s.target << ": " << e.what() << '\n';
    return 2;
  }

  const bool tty = isatty(STDERR_FILENO) == 1;
  const auto progress_every = std::chrono::seconds{1};
  auto next_progress = std::chrono::steady_clock::now() + progress_every;
  bool stopping = false;
  bool progress_shown = false;
  while (!fleet.wait_for(milliseconds{0})) {
    const auto now = std::chrono::steady_clock::now();
    const auto until_progress = std::chrono::duration_cast<milliseconds>(next_progress - now);
    const int signal =
        take_termination_signal(std::clamp(until_progress, milliseconds{1}, milliseconds{200}));
    if (signal != 0) {
      if (stopping) {
        std::cerr << "\ntgw simulate: second signal, exiting without a summary\n";
        std::_Exit(130);
      }
      stopping = true;
      spdlog::info("simulate: signal {} received, closing every device", signal);
      fleet.stop();
    }
    if (std::chrono::steady_clock::now() >= next_progress) {
      next_progress += progress_every;
      if (!s.quiet || progress_log.is_open()) {
        const sim::fleet_progress progress = fleet.sample_progress();
        if (progress_log.is_open())
          progress_log << sim::format_progress_json(progress) << std::endl;
        if (!s.quiet) {
          std::cerr << (tty ? "\r\033[K" : "") << sim::format_progress(progress)
                    << (tty ? "" : "\n") << std::flush;
          progress_shown = true;
        }
      }
    }
  }
  fleet.wait();
  if (tty && progress_shown) std::cerr << '\n';

  const sim::fleet_report report = fleet.report();
  if (s.json) {
    nlohmann::ordered_json j = sim::to_json(report);
    j["target"] = s.target;
    j["transport"] = s.transport;
    j["tls"] = o.tls;
    j["codec"] = codecs::codec_name(static_cast<std::uint8_t>(o.codec));
    j["records_per_packet"] = o.records_per_packet;
    j["io_per_record"] = o.io_per_record;
    std::cout << j.dump() << '\n';
  } else {
    std::cout << "tgw simulate: " << o.count << " device(s), codec "
              << codecs::codec_name(static_cast<std::uint8_t>(o.codec)) << ", "
              << o.records_per_packet << " record(s) of " << o.io_per_record << " IO per packet, "
              << s.transport << (o.tls ? "+tls" : "") << " to " << s.target << '\n'
              << sim::to_text(report);
  }
  std::cout << std::flush;
  const sim::fleet_totals& t = report.totals;
  return t.packets_acked == 0 || t.bad_crc_acked > 0 ? 1 : 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto s = std::make_shared<simulate_settings>();
  sim::fleet_options& o = s->fleet;
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "A fleet of simulated Teltonika trackers: each device connects, sends its IMEI, sends\n"
      "AVL packets and waits for their ACK, resends on timeout or a wrong count, reconnects\n"
      "with backoff, and answers Codec 12/14 commands. Durations take ms, s, m or h.\n"
      "Progress goes to stderr each second, the summary to stdout. SIGINT/SIGTERM stop it.\n"
      "Exit code: 0 packets were ACKed, 1 none was (or a corrupted one was), 2 usage error.");
  cmd->add_option("-n,--count", o.count, "Number of devices")
      ->envname("TGW_SIM_COUNT")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  cmd->add_option("--codec", s->codec, "AVL codec: 8, 8E or 16")
      ->envname("TGW_SIM_CODEC")
      ->check(CLI::IsMember({"8", "8E", "8e", "16"}))
      ->capture_default_str();
  cmd->add_option("--records-per-packet", o.records_per_packet, "AVL records in each packet")
      ->envname("TGW_SIM_RECORDS_PER_PACKET")
      ->check(CLI::Range(std::size_t{1}, std::size_t{255}))
      ->capture_default_str();
  cmd->add_option("--io-per-record", o.io_per_record, "FMB IO elements in each record")
      ->envname("TGW_SIM_IO_PER_RECORD")
      ->check(CLI::Range(std::size_t{0}, sim::max_io_per_record))
      ->capture_default_str();
  auto* interval = cmd->add_option("--send-interval", s->send_interval,
                                   "Pause between an ACK and the next packet")
                       ->envname("TGW_SIM_SEND_INTERVAL")
                       ->check(duration_text())
                       ->capture_default_str();
  cmd->add_option("--send-period", s->send_period,
                  "Send on a fixed schedule instead, as a tracker's send period: the next packet "
                  "is due this long after the previous one went out, or at once if its ACK came "
                  "later (0s: off)")
      ->envname("TGW_SIM_SEND_PERIOD")
      ->check(duration_text())
      ->excludes(interval)
      ->capture_default_str();
  cmd->add_option("--ramp-up", s->ramp_up, "Spread the devices' first connections over this time")
      ->envname("TGW_SIM_RAMP_UP")
      ->check(duration_text())
      ->capture_default_str();
  cmd->add_option("--duration", s->duration, "Stop after this long (0: run until stopped)")
      ->envname("TGW_SIM_DURATION")
      ->check(duration_text())
      ->capture_default_str();
  cmd->add_option("--packets", o.packets_per_device,
                  "ACKed packets after which a device closes (0: no limit)")
      ->envname("TGW_SIM_PACKETS")
      ->capture_default_str();
  cmd->add_option("--target", s->target, "Gateway address host:port ([v6]:port)")
      ->envname("TGW_SIM_TARGET")
      ->check(target_text())
      ->capture_default_str();
  cmd->add_option("--transport", s->transport, "tcp, or udp (datagrams and 7-byte responses)")
      ->envname("TGW_SIM_TRANSPORT")
      ->check(CLI::IsMember({"tcp", "udp"}))
      ->capture_default_str();
  cmd->add_flag("--tls", o.tls,
                "Speak TLS (1.2 or 1.3) to the gateway, as a device with "
                "Encryption: TLS does")
      ->envname("TGW_SIM_TLS");
  cmd->add_option("--tls-version", o.tls_version,
                  "Highest TLS version offered: 1.2 (what Teltonika firmware speaks) or 1.3")
      ->envname("TGW_SIM_TLS_VERSION")
      ->check(CLI::IsMember({"1.2", "1.3"}))
      ->capture_default_str();
  cmd->add_option("--tls-cert", o.tls_cert_file,
                  "PEM client certificate every device presents (for a gateway with "
                  "--tls-client-ca)")
      ->envname("TGW_SIM_TLS_CERT")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", o.tls_key_file, "PEM private key of --tls-cert")
      ->envname("TGW_SIM_TLS_KEY")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tls-ca", o.tls_ca_file,
                  "PEM CAs the gateway's certificate must chain to (default: not checked)")
      ->envname("TGW_SIM_TLS_CA")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ack-timeout", s->ack_timeout,
                  "Wait for an ACK (or the IMEI verdict) before sending the same packet again")
      ->envname("TGW_SIM_ACK_TIMEOUT")
      ->check(duration_text())
      ->capture_default_str();
  cmd->add_flag("--reconnect,!--no-reconnect", o.reconnect,
                "Reconnect after a lost connection and resend the unACKed packet (default on)")
      ->envname("TGW_SIM_RECONNECT")
      ->capture_default_str();
  cmd->add_option("--reconnect-delay", s->reconnect_delay, "First reconnect backoff, then doubled")
      ->envname("TGW_SIM_RECONNECT_DELAY")
      ->check(duration_text())
      ->capture_default_str();
  cmd->add_option("--reconnect-max-delay", s->reconnect_max_delay, "Largest reconnect backoff")
      ->envname("TGW_SIM_RECONNECT_MAX_DELAY")
      ->check(duration_text())
      ->capture_default_str();
  cmd->add_option("--bad-crc-share", o.bad_crc_share,
                  "Share of packets first sent with a corrupted CRC; the intact packet follows "
                  "after the ACK timeout (TCP)")
      ->envname("TGW_SIM_BAD_CRC_SHARE")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--reply-text", o.reply_text,
                  "Reply to a Codec 12/14 command; {command} stands for the command's text")
      ->envname("TGW_SIM_REPLY_TEXT")
      ->capture_default_str();
  cmd->add_option("--reply-delay-ms", s->reply_delay_ms, "Wait before replying to a command")
      ->envname("TGW_SIM_REPLY_DELAY_MS")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{3'600'000}))
      ->capture_default_str();
  cmd->add_option("--ignore-command-share", o.ignore_command_share,
                  "Share of commands left unanswered")
      ->envname("TGW_SIM_IGNORE_COMMAND_SHARE")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--imei-base", o.imei_base, "IMEI of device 0; device i is base + i (15 digits)")
      ->envname("TGW_SIM_IMEI_BASE")
      ->check(CLI::Range(std::uint64_t{100'000'000'000'000}, std::uint64_t{999'999'999'999'999}))
      ->capture_default_str();
  cmd->add_option("--source-spread", o.source_spread,
                  "Bind device i to 127.0.0.1 + i % N (loopback targets), to use more than one "
                  "address's ephemeral ports; 0: no bind")
      ->envname("TGW_SIM_SOURCE_SPREAD")
      ->check(CLI::Range(std::size_t{0}, sim::max_source_spread))
      ->capture_default_str();
  cmd->add_option("--io-threads", o.io_threads, "Threads running the devices' sockets")
      ->envname("TGW_SIM_IO_THREADS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
      ->capture_default_str();
  cmd->add_option("--cpu-policy", s->cpu_policy,
                  "Kernel scheduling of the simulator's threads: batch (SCHED_BATCH: a woken "
                  "thread does not preempt a running one, such as the gateway on the same host), "
                  "normal, or keep (whatever the process was started with)")
      ->envname("TGW_SIM_CPU_POLICY")
      ->check(CLI::IsMember(process::cpu_policy_names()))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of positions, bad CRCs and ignored commands")
      ->envname("TGW_SIM_SEED")
      ->capture_default_str();
  cmd->add_option("--acked-log", o.acked_log_path,
                  "Write one line per ACKed packet to this file: IMEI, first and last record "
                  "timestamp (ms), record count")
      ->envname("TGW_SIM_ACKED_LOG");
  cmd->add_option("--progress-log", s->progress_log,
                  "Also write each second's progress as a JSON line to this file, with that "
                  "second's ACK latency histogram (merge a window's lines for its exact "
                  "percentiles)")
      ->envname("TGW_SIM_PROGRESS_LOG");
  cmd->add_flag("-q,--quiet", s->quiet, "No progress line")
      ->envname("TGW_SIM_QUIET")
      ->capture_default_str();
  cmd->add_flag("--json", s->json, "Print the summary as one JSON object")
      ->envname("TGW_SIM_JSON")
      ->capture_default_str();
  add_log_options(cmd, s->log_level, s->log_format, "TGW_SIM");
  cmd->callback([s, &exit_code] { exit_code = run_simulate(*s); });
}

}  // namespace tgw::infra
