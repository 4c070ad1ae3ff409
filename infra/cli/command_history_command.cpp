#include "infra/cli/command_history_command.hpp"

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "infra/cli/command_rows.hpp"
#include "infra/cli/json_text.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/cli/value_checks.hpp"
#include "infra/commands/command_history.hpp"
#include "infra/redis/server_mode.hpp"
#include "infra/text/duration.hpp"
#include "infra/text/human_time.hpp"

namespace tgw::infra {
namespace {

struct history_settings {
  redis_choice redis;
  std::string imei;
  std::string since;
  bool json = false;
};

/// --since as ms since the epoch: a time, or a duration before `now`.
std::int64_t since_ms(const std::string& since, std::int64_t now) {
  if (since.empty()) return 0;
  if (const auto at = parse_utc_time(since)) return *at;
  return now - parse_duration(since)->count();
}

int run_history(const history_settings& s) {
  int exit_code = 0;
  auto reader = open_redis_reader(s.redis, "command history", exit_code);
  if (!reader) return exit_code;
  std::string error;
  const auto now = redis::server_time_ms(*reader->conn, error);
  std::optional<std::vector<commands::command_record>> history;
  if (now && reader->shards)
    history = commands::read_command_history(*reader->conn, *reader->shards, s.imei,
                                             since_ms(s.since, *now), error);
  else if (now)
    history.emplace();  // a cluster no gateway has written to
  if (!history) {
    std::cerr << "tgw command history: " << error << '\n';
    return 1;
  }
  if (s.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& r : *history) list.push_back(command_json(r));
    std::cout << json_text({{"imei", s.imei}, {"at_ms", *now}, {"commands", list}}) << '\n';
    return 0;
  }
  if (!history->empty()) command_table(*history, *now).print(std::cout);
  std::cout << history->size() << " command" << (history->size() == 1 ? "" : "s") << " for "
            << s.imei
            << (s.since.empty() ? std::string() : " since " + utc_time(since_ms(s.since, *now)))
            << " (at " << utc_time(*now) << ")\n";
  return 0;
}

}  // namespace

void add_command_history(CLI::App* command, int& exit_code) {
  auto s = std::make_shared<history_settings>();
  CLI::App* cmd = command->add_subcommand(
      "history",
      "Every command sent to a device that Redis still keeps, oldest first: when, its text,\n"
      "who published it, its status and the device's reply. Commands still queued or\n"
      "waiting for the device are listed too.");
  add_redis_options(cmd, s->redis);
  cmd->add_option("--imei", s->imei, "The device (15 or 16 digits)")
      ->envname("TGW_COMMAND_IMEI")
      ->required()
      ->check(device_imei_check());
  cmd->add_option("--since", s->since,
                  "Only commands published since then: a duration before now (24h, 30m) or a UTC "
                  "time (2026-11-26T15:00:00Z, 2026-11-26)")
      ->envname("TGW_COMMAND_SINCE")
      ->check(CLI::Validator(
          [](std::string& text) {
            return parse_utc_time(text) || parse_duration(text)
                       ? std::string()
                       : "not a duration (24h, 30m) or a UTC time (2026-11-26T15:00:00Z): " + text;
          },
          "WHEN"));
  cmd->add_flag("--json", s->json, "One line of JSON with raw values (times in ms since the epoch)")
      ->envname("TGW_COMMAND_JSON");
  cmd->callback([s, &exit_code] { exit_code = run_history(*s); });
}

}  // namespace tgw::infra
