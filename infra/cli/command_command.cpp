#include "infra/cli/command_command.hpp"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "codecs/command.hpp"
#include "infra/cli/command_history_command.hpp"
#include "infra/cli/command_rows.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/cli/value_checks.hpp"
#include "infra/commands/command_publisher.hpp"
#include "infra/commands/command_send.hpp"
#include "infra/json/frame_json.hpp"
#include "infra/process/termination.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/text/duration.hpp"
#include "infra/text/hex.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra {
namespace {

using std::chrono::milliseconds;

// Exit codes of `tgw command send` (docs/COMMANDS.md).
constexpr int exit_responded = 0;
constexpr int exit_failed = 1;
constexpr int exit_queued = 3;

// The device reads Codec 12/14 commands into a small buffer; the gateway refuses
// larger payloads, so refuse them here before they travel.
constexpr std::size_t max_payload = 512;

struct common_settings {
  redis_choice redis;
  bool json = false;
};

struct send_settings {
  common_settings common;
  std::string imei;
  std::string text;
  int codec = 12;
  std::string timeout = "30s";
  std::string ttl = "300s";
  bool queue_if_offline = false;
  int ack_replicas = 0;
  std::string publisher;  ///< Empty: user@host.
  bool allow_control_chars = false;
};

// Who runs this send, for the device's command history when --publisher is not given.
std::string user_at_host() {
  std::string user = "uid " + std::to_string(::geteuid());
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr)
    user = pw->pw_name;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return user;
  return user + "@" + host;
}

std::unique_ptr<commands::command_publisher> open_publisher(const redis_choice& choice,
                                                            const char* who) {
  std::string error;
  bool usage = false;
  const auto where = resolve_redis(choice, error, usage);
  if (!where) {
    std::cerr << "tgw command " << who << ": " << error << '\n';
    return nullptr;
  }
  // The socket timeout exceeds the 1000 ms BLOCK of each read: with a shorter one
  // hiredis abandons a read that the server still serves.
  const redis::connection::options options{*where, milliseconds{2000}, milliseconds{3000},
                                           std::string("tgw-command-") + who};
  // On a cluster, the key shards the gateways agreed on: a command goes to its device's.
  redis::connection probe(options);
  auto shards = redis::read_key_shards(probe, error);
  if (!shards) {
    std::cerr << "tgw command " << who << ": " << error << '\n';
    return nullptr;
  }
  auto publisher = std::make_unique<commands::command_publisher>(options, milliseconds{1000},
                                                                 std::move(*shards));
  if (!publisher->load_library(error)) {
    std::cerr << "tgw command " << who << ": Redis unreachable: " << error << '\n';
    return nullptr;
  }
  return publisher;
}

nlohmann::ordered_json null_if_empty(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
}

// The reply as a person reads it: its text, or its bytes where they are no text, with
// control bytes and anything else a terminal would act on escaped (\xNN).
std::string shown_reply(const commands::command_response& r) {
  if (!r.response.empty() || r.response_hex.empty()) return terminal_safe(r.response);
  const auto bytes = parse_hex(r.response_hex);
  if (!bytes) return "hex:" + terminal_safe(r.response_hex);
  return terminal_safe(
      std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
}

// One JSON line: ASCII only (every other character escaped), so that no byte of a
// reply reaches the terminal raw and any JSON reader takes the line.
std::string json_line(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

int run_send(const send_settings& s) {
  if (const auto at = codecs::find_control_character(s.text); at && !s.allow_control_chars) {
    std::cerr << "tgw command send: --text holds a control character (byte "
              << static_cast<unsigned>(static_cast<unsigned char>(s.text[*at])) << " at offset "
              << *at
              << "): a CR or LF would let the text carry a second command; refused. Pass "
                 "--allow-control-chars if the device needs it (the gateway then needs "
                 "--allow-command-control-chars too)\n";
    return 2;
  }
  const milliseconds timeout = *parse_duration(s.timeout);
  const milliseconds ttl = *parse_duration(s.ttl);
  auto publisher = open_publisher(s.common.redis, "send");
  if (!publisher) return exit_failed;
  publisher->identify_as(s.publisher.empty() ? user_at_host() : s.publisher);

  const auto started = std::chrono::steady_clock::now();
  commands::send_request request{
      s.imei,
      s.text,
      s.codec,
      std::chrono::duration_cast<std::chrono::seconds>(ttl + milliseconds{999}),
      s.queue_if_offline,
      s.ack_replicas,
      timeout};
  const commands::send_outcome sent =
      commands::send_command(*publisher, request, process::termination_requested);
  const commands::publish_result* published = &sent.published;
  if (published->status.empty()) {
    std::cerr << "tgw command send: command " << published->command_id << ": " << sent.error
              << '\n';
    return exit_failed;
  }
  nlohmann::ordered_json out;
  out["command_id"] = published->command_id;
  if (s.ack_replicas > 0 && published->status == "sent") {
    const auto& confirmed = sent.replicas_confirmed;
    out["replicas_confirmed"] = confirmed ? nlohmann::ordered_json(*confirmed) : nullptr;
    if (!confirmed || *confirmed < s.ack_replicas)
      std::cerr << "tgw command send: command " << published->command_id << " published, but "
                << (confirmed ? std::to_string(*confirmed) : std::string("no")) << " of "
                << s.ack_replicas << " replicas confirmed it\n";
  }
  out["imei"] = s.imei;
  std::string line;
  int code = exit_failed;
  commands::command_response r;
  bool answered = false;
  if (published->status == "offline") {
    r.status = "failed";
    r.failure_reason = "socket_closed";
    line = "failed: socket_closed (device " + s.imei + " is not connected)";
  } else if (published->status == "queued") {
    r.status = "queued";
    line = "queued: device offline; delivered on next connect";
    code = exit_queued;
  } else if (sent.response) {
    r = *sent.response;
    answered = true;
    const std::string reply = shown_reply(r);
    if (r.status == "responded") {
      line = "responded: " + reply;
      code = exit_responded;
    } else if (r.status == "failed") {
      line =
          "failed: " + terminal_safe(r.failure_reason) + (reply.empty() ? "" : " (" + reply + ")");
    } else {
      line = terminal_safe(r.status) + (reply.empty() ? "" : ": " + reply);
    }
  } else {
    r.status = "timeout";
    r.failure_reason = "no response within " + format_duration(timeout);
    line = "timeout: " + r.failure_reason;
  }
  if (!s.common.json) {
    std::cout << line << '\n';
    return code;
  }
  out["status"] = r.status;
  out["response"] = reply_text_json(r.status, r.response, r.response_hex);
  out["response_hex"] = reply_hex_json(r.status, r.response_hex);
  out["failure_reason"] = null_if_empty(r.failure_reason);
  out["responded_at"] = answered ? nlohmann::ordered_json(r.responded_at) : nullptr;
  out["owner"] = null_if_empty(published->owner);
  out["round_trip_ms"] =
      answered ? nlohmann::ordered_json(std::chrono::duration<double, std::milli>(
                                            std::chrono::steady_clock::now() - started)
                                            .count())
               : nullptr;
  std::cout << json_line(out) << '\n';
  return code;
}

int run_watch(const common_settings& s) {
  auto publisher = open_publisher(s.redis, "watch");
  if (!publisher) return exit_failed;
  std::string error;
  const bool ok = publisher->watch(
      [&](const commands::command_response& r) {
        if (s.json) {
          nlohmann::ordered_json out;
          out["entry_id"] = r.entry_id;
          out["command_id"] = r.command_id;
          out["status"] = r.status;
          out["response"] = reply_text_json(r.status, r.response, r.response_hex);
          out["failure_reason"] = null_if_empty(r.failure_reason);
          out["responded_at"] = r.responded_at;
          out["imei"] = null_if_empty(r.imei);
          out["response_hex"] = reply_hex_json(r.status, r.response_hex);
          std::cout << json_line(out) << std::endl;
        } else {
          std::cout << iso8601_utc_ms(
                           static_cast<std::uint64_t>(std::max<std::int64_t>(r.responded_at, 0)))
                    << ' ' << terminal_safe(r.imei.empty() ? "-" : r.imei) << ' '
                    << terminal_safe(r.command_id) << ' ' << terminal_safe(r.status);
          if (!r.failure_reason.empty()) std::cout << ' ' << terminal_safe(r.failure_reason);
          const std::string reply = shown_reply(r);
          if (!reply.empty()) std::cout << ": " << reply;
          std::cout << std::endl;
        }
        return true;
      },
      error, process::termination_requested);
  if (!ok) {
    std::cerr << "tgw command watch: " << error << '\n';
    return exit_failed;
  }
  return 0;
}

void add_common(CLI::App* cmd, common_settings& s) {
  add_redis_options(cmd, s.redis);
  cmd->add_flag("--json", s.json, "Print one JSON object per outcome")->envname("TGW_COMMAND_JSON");
}

}  // namespace

void add_command_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "command",
      "Send a command to a device through the gateway that holds it, watch responses, or list "
      "a device's commands");
  cmd->require_subcommand(1);

  auto s = std::make_shared<send_settings>();
  CLI::App* send = cmd->add_subcommand(
      "send",
      "Route a command to the instance holding the device and wait for its response.\n"
      "Exit code: 0 responded; 1 failed, device offline, no response within --timeout or\n"
      "Redis unreachable; 2 usage error; 3 queued for the device's next connection.");
  add_common(send, s->common);
  send->add_option("--imei", s->imei, "The device's IMEI (15 digits, or 16 for an IMEISV)")
      ->envname("TGW_COMMAND_IMEI")
      ->required()
      ->check(device_imei_check());
  send->add_option("--text", s->text, "The command text, e.g. getinfo")
      ->envname("TGW_COMMAND_TEXT")
      ->required()
      ->check(CLI::Validator(
          [](std::string& t) {
            if (t.empty()) return std::string("empty command");
            return t.size() > max_payload ? "command over " + std::to_string(max_payload) + " bytes"
                                          : std::string();
          },
          "TEXT"));
  send->add_option("--codec", s->codec, "12 (text reply) or 14 (IMEI-checked)")
      ->envname("TGW_COMMAND_CODEC")
      ->check(CLI::IsMember({12, 14}))
      ->capture_default_str();
  send->add_option("--timeout", s->timeout, "How long to wait for the response")
      ->envname("TGW_COMMAND_TIMEOUT")
      ->check(duration_check())
      ->capture_default_str();
  send->add_option("--ttl", s->ttl, "Not delivered after this long (0: never expires)")
      ->envname("TGW_COMMAND_TTL")
      ->check(duration_check())
      ->capture_default_str();
  send->add_option("--ack-replicas", s->ack_replicas,
                   "After publishing, WAIT for this many replicas to hold the command, and "
                   "warn when fewer do (as tgw serve --ack-replicas does for records)")
      ->envname("TGW_ACK_REPLICAS")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  send->add_option("--publisher", s->publisher,
                   "Who sends the command, as `tgw command history` shows it (default: "
                   "user@host)")
      ->envname("TGW_COMMAND_PUBLISHER");
  send->add_flag("--allow-control-chars", s->allow_control_chars,
                 "Send a text with control characters (CR, LF, NUL, ESC...), refused "
                 "otherwise; the gateway delivers it only with --allow-command-control-chars")
      ->envname("TGW_COMMAND_ALLOW_CONTROL_CHARS");
  send->add_flag("--queue-if-offline", s->queue_if_offline,
                 "Queue the command for the device's next connection when it is offline")
      ->envname("TGW_COMMAND_QUEUE_IF_OFFLINE");
  send->callback([s, &exit_code] { exit_code = run_send(*s); });

  auto w = std::make_shared<common_settings>();
  CLI::App* watch =
      cmd->add_subcommand("watch", "Print every command response from now on, until interrupted");
  add_common(watch, *w);
  watch->callback([w, &exit_code] { exit_code = run_watch(*w); });

  add_command_history(cmd, exit_code);
}

}  // namespace tgw::infra
