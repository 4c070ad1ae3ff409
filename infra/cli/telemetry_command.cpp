#include "infra/cli/telemetry_command.hpp"

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "codecs/imei.hpp"
#include "infra/cli/io_name_options.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/process/termination.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/telemetry/entry_view.hpp"
#include "infra/telemetry/io_dictionary.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra {
namespace {

struct tail_settings {
  redis_choice redis;
  std::string imei;
  std::string from = "now";
  std::uint64_t count = 0;
  bool json = false;
  io_name_options io_names;
};

// "now": the id of the newest entry, so that only records stored from here on show.
std::optional<std::string> start_id(redis::connection& conn, const std::string& stream,
                                    const std::string& from, std::string& error) {
  if (from == "start") return "0-0";
  if (from != "now") return from;
  const auto last = conn.command({"XREVRANGE", stream, "+", "-", "COUNT", "1"});
  if (last.is_error()) {
    error = last.text;
    return std::nullopt;
  }
  return last.elements.empty() ? "0-0" : last.elements.front().elements.at(0).text;
}

bool valid_from(const std::string& from) {
  if (from == "now" || from == "start") return true;
  const auto dash = from.find('-');
  const auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (dash == std::string::npos) return digits(from);
  return digits(std::string_view(from).substr(0, dash)) &&
         digits(std::string_view(from).substr(dash + 1));
}

int run_tail(const tail_settings& s) {
  if (!s.imei.empty()) {
    codecs::imei parsed;
    if (codecs::imei::parse(s.imei, parsed) != codecs::errc::ok) {
      std::cerr << "tgw telemetry tail: --imei '" << s.imei
                << "' is not an IMEI (15 or 16 digits)\n";
      return 2;
    }
  }
  if (!valid_from(s.from)) {
    std::cerr << "tgw telemetry tail: --from '" << s.from
              << "': expected now, start or a stream entry id (1700000000000-0)\n";
    return 2;
  }
  int exit_code = 0;
  const auto names = load_io_names(s.io_names, "tgw telemetry tail", exit_code);
  if (exit_code != 0) return exit_code;
  std::string error;
  bool usage = false;
  const auto where = resolve_redis(s.redis, error, usage);
  if (!where) {
    std::cerr << "tgw telemetry tail: " << error << '\n';
    return usage ? 2 : 1;
  }
  // The socket timeout outlasts the BLOCK of each read, or hiredis would give up on a
  // read the server still holds.
  redis::connection conn({*where, std::chrono::milliseconds{2000}, std::chrono::milliseconds{4000},
                          "tgw-telemetry-tail"});
  if (!conn.ensure_connected(error)) {
    std::cerr << "tgw telemetry tail: " << error << '\n';
    return 1;
  }
  // The streams to read: one on a single node; on a cluster one per key shard, or
  // only the device's with --imei.
  const auto shards = redis::read_key_shards(conn, error);
  if (!shards) {
    std::cerr << "tgw telemetry tail: " << error << '\n';
    return 1;
  }
  std::vector<std::string> streams;
  if (!s.imei.empty()) {
    streams.push_back(telemetry::keys::telemetry_stream_in(shards->prefix_of(s.imei)));
  } else {
    for (std::uint32_t i = 0; i < shards->count(); ++i)
      streams.push_back(telemetry::keys::telemetry_stream_in(shards->prefix(i)));
  }
  std::vector<std::string> last;
  for (const std::string& stream : streams) {
    auto id = start_id(conn, stream, s.from, error);
    if (!id) {
      std::cerr << "tgw telemetry tail: cannot read " << stream << ": " << error << '\n';
      return 1;
    }
    last.push_back(std::move(*id));
  }
  const telemetry::io_dictionary* table = names ? &*names : nullptr;
  std::uint64_t shown = 0;
  // One stream: a blocking read. Several (in different slots, which one read cannot
  // span): each read at once in turn, with a pause after a round that found nothing;
  // records of different shards then show in the order they are read, not stored.
  const bool poll = streams.size() > 1;
  while (!process::termination_requested()) {
    bool any = false;
    for (std::size_t k = 0; k < streams.size(); ++k) {
      std::vector<std::string> argv = {"XREAD", "COUNT", "512"};
      if (!poll) argv.insert(argv.end(), {"BLOCK", "1000"});
      argv.insert(argv.end(), {"STREAMS", streams[k], last[k]});
      const auto reply = conn.command(argv);
      if (reply.is_error()) {
        // A restart or a failover: say so once per failure and try again.
        std::cerr << "tgw telemetry tail: " << reply.text << "; retrying\n";
        std::this_thread::sleep_for(std::chrono::seconds{1});
        break;
      }
      if (reply.elements.empty()) continue;  // BLOCK timed out, or nothing new.
      any = true;
      for (const auto& entry : reply.elements.front().elements.at(1).elements) {
        last[k] = entry.elements.at(0).text;
        telemetry::entry_map f;
        const auto& kv = entry.elements.at(1).elements;
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2) f[kv[i].text] = kv[i + 1].text;
        if (!s.imei.empty() && f["imei"] != s.imei) continue;
        const auto j = telemetry::entry_json(last[k], f, table);
        // ASCII only, and bytes that are no UTF-8 replaced rather than thrown on: an
        // entry holds whatever was written to the stream.
        std::cout << (s.json ? j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace)
                             : telemetry::entry_line(j, table))
                  << '\n';
        if (s.count > 0 && ++shown >= s.count) {
          std::cout << std::flush;
          return 0;
        }
      }
    }
    std::cout << std::flush;
    if (poll && !any) std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  return 0;
}

}  // namespace

void add_telemetry_command(CLI::App& app, int& exit_code) {
  CLI::App* telemetry = app.add_subcommand("telemetry", "Read the records the gateways store");
  telemetry->require_subcommand(1);
  auto s = std::make_shared<tail_settings>();
  CLI::App* tail = telemetry->add_subcommand(
      "tail",
      "Follow the telemetry stream (telemetry:records; on a Redis Cluster every shard's):\n"
      "every record stored from now on, of one IMEI or all, one line each, or JSON lines\n"
      "with --json. Stops on Ctrl-C, or after --count records. Exit code: 0 done, 1 Redis\n"
      "unreachable, 2 usage error.");
  add_redis_options(tail, s->redis);
  tail->add_option("--imei", s->imei, "Only this device's records")->envname("TGW_TAIL_IMEI");
  tail->add_option("--from", s->from,
                   "now (records stored from now on), start (the whole stream) or an entry id "
                   "to read after")
      ->envname("TGW_TAIL_FROM")
      ->capture_default_str();
  tail->add_option("--count", s->count, "Stop after this many records (0: never)")
      ->envname("TGW_TAIL_COUNT")
      ->capture_default_str();
  tail->add_flag("--json", s->json,
                 "One JSON object a record: id, imei, ts (a decimal string), time, lat/lon in "
                 "degrees, the other fields, io in the format 4 form (and io_named with "
                 "--names, and io_size_mismatch where a wire size is not the dictionary's)")
      ->envname("TGW_TAIL_JSON");
  add_io_name_options(
      tail, s->io_names,
      "Name the IO elements the dictionary knows, with physical values, units and error "
      "states");
  tail->callback([s, &exit_code] { exit_code = run_tail(*s); });
}

}  // namespace tgw::infra
