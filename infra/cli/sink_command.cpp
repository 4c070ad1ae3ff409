#include "infra/cli/sink_command.hpp"
#include "infra/cli/log_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "infra/cli/io_name_options.hpp"
#include "infra/cli/listen_address.hpp"
#include "infra/cli/metrics_limit_options.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/exporter/metrics_server.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/log/log.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/sink/pg_connection.hpp"
#include "infra/sink/positions_schema.hpp"
#include "infra/sink/sink_metrics.hpp"
#include "infra/sink/stream_sink.hpp"
#include "infra/telemetry/io_dictionary.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra {
namespace {

struct sink_options {
  redis_choice redis;
  std::string dsn;
  bool init = false;
  sink::sink_settings settings;
  std::string from = "start";
  std::uint64_t block_ms = 1000;
  std::uint64_t claim_idle_ms = 60000;
  std::uint64_t claim_interval_ms = 5000;
  std::uint64_t progress_s = 10;
  std::size_t committers = 2;
  io_name_options io_names;
  std::string metrics_addr;
  http::server_limits metrics_limits;
  std::string log_level = "info";
  std::string log_format = "text";
};

std::string default_consumer() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] ? host : "sink") + "-" + std::to_string(::getpid());
}

constexpr const char* me = "tgw sink postgres";

int run_sink(sink_options& o) {
  setup_logging(o.log_level, o.log_format);
  std::string error;
  int usage_code = 0;
  auto names = load_io_dictionary(o.io_names, me, usage_code);
  if (!names) return usage_code;
  auto first_pg = std::make_unique<sink::pg_connection>(o.dsn);
  sink::pg_connection& pg = *first_pg;
  if (!pg.ensure_connected(error)) {
    std::cerr << me << ": cannot connect to PostgreSQL with --dsn: " << error << '\n';
    return 1;
  }
  // --init only creates tables: it needs no Redis.
  if (o.init) {
    if (!sink::create_positions_schema(pg, error)) {
      std::cerr << me << ": --init: " << error << '\n';
      return 1;
    }
    std::cout << "created positions (partitioned by day of ts), the view last_positions (one "
                 "row per device) over position_devices, and rejected_entries in "
              << pg.describe() << '\n';
    return 0;
  }
  bool usage = false;
  const auto where = resolve_redis(o.redis, error, usage);
  if (!where) {
    std::cerr << me << ": " << error << '\n';
    return usage ? 2 : 1;
  }
  if (const std::string problem = sink::check_positions_schema(pg); !problem.empty()) {
    std::cerr << me << ": " << problem << '\n';
    return 1;
  }
  auto& s = o.settings;
  s.group_start = o.from == "now" ? "$" : "0";
  s.block = std::chrono::milliseconds{o.block_ms};
  s.claim_idle = std::chrono::milliseconds{o.claim_idle_ms};
  s.claim_interval = std::chrono::milliseconds{o.claim_interval_ms};
  s.progress_interval = std::chrono::seconds{o.progress_s};
  if (s.consumer.empty()) s.consumer = default_consumer();
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read before the worker starts
  if (const char* point = std::getenv("TGW_SINK_FAILPOINT")) s.failpoint = point;
  // The socket timeout outlasts the BLOCK of each read, or hiredis would give up on a
  // read the server still holds.
  const redis::connection::options reader{*where, std::chrono::milliseconds{2000},
                                          s.block + std::chrono::milliseconds{3000},
                                          "tgw-sink-" + s.consumer};
  std::vector<std::string> streams = {s.stream};
  {
    redis::connection probe(reader);
    if (!probe.ensure_connected(error)) {
      std::cerr << me << ": cannot connect to Redis: " << error << '\n';
      return 1;
    }
    // On a Redis Cluster the telemetry is in one stream per key shard: read them all,
    // one reader (and its committers) each, unless --stream names one.
    if (where->via_cluster() && s.stream == telemetry::keys::telemetry_stream) {
      const auto shards = redis::read_key_shards(probe, error);
      if (!shards) {
        std::cerr << me << ": " << error << '\n';
        return 1;
      }
      streams.clear();
      for (std::uint32_t i = 0; i < shards->count(); ++i)
        streams.push_back(telemetry::keys::telemetry_stream_in(shards->prefix(i)));
    }
  }
  sink::sink_counters counters;
  counters.postgres_up = true;
  std::unique_ptr<exporter::metrics_server> endpoint;
  if (!o.metrics_addr.empty()) {
    try {
      endpoint = std::make_unique<exporter::metrics_server>(
          o.metrics_addr,
          [&counters, group = s.group, consumer = s.consumer] {
            return sink::sink_metric_families(counters, group, consumer);
          },
          [&counters] { return sink::sink_readiness(counters); }, o.metrics_limits,
          exporter::metric_labels{{"group", s.group}, {"consumer", s.consumer}});
    } catch (const std::exception& e) {
      std::cerr << me << ": " << exporter::cannot_serve_metrics(e) << '\n';
      return 1;
    }
  }
  // Per stream: a reader connection, and committers that each write on a PostgreSQL
  // connection and acknowledge on a Redis connection of their own (a libpq or hiredis
  // connection belongs to one thread).
  std::vector<std::unique_ptr<redis::connection>> readers;
  std::vector<std::unique_ptr<sink::stream_sink>> workers;
  for (const std::string& stream : streams) {
    std::vector<sink::committer_link> committers;
    for (std::size_t i = 0; i < o.committers; ++i) {
      sink::committer_link link;
      link.pg = first_pg ? std::move(first_pg) : std::make_unique<sink::pg_connection>(o.dsn);
      link.acker = std::make_unique<redis::connection>(redis::connection::options{
          *where, std::chrono::milliseconds{2000}, std::chrono::milliseconds{5000},
          "tgw-sink-ack-" + s.consumer});
      committers.push_back(std::move(link));
    }
    auto table = names;  // Each worker owns its copy, read once above.
    sink::sink_settings settings = s;
    settings.stream = stream;
    readers.push_back(std::make_unique<redis::connection>(reader));
    workers.push_back(std::make_unique<sink::stream_sink>(
        settings, *readers.back(), std::move(committers), std::move(*table), counters));
  }
  if (workers.size() == 1) return workers.front()->run();
  spdlog::info("{}: reading {} telemetry streams (one per key shard)", me, workers.size());
  std::vector<int> codes(workers.size(), 0);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers.size(); ++i)
    threads.emplace_back([&, i] { codes[i] = workers[i]->run(); });
  for (std::thread& t : threads) t.join();
  return *std::max_element(codes.begin(), codes.end());
}

}  // namespace

void add_sink_command(CLI::App& app, int& exit_code) {
  CLI::App* sink = app.add_subcommand("sink", "Move the telemetry out of Redis into a database");
  sink->require_subcommand(1);
  auto o = std::make_shared<sink_options>();
  CLI::App* cmd = sink->add_subcommand(
      "postgres",
      "Read the telemetry stream with a Redis consumer group and write every record into the\n"
      "PostgreSQL table positions, exactly once in effect: a batch is acknowledged only after\n"
      "its transaction commits, and a batch delivered again changes nothing. Run several with\n"
      "the same --group to share the work; one that dies leaves its entries to the others.\n"
      "Create the tables first with --init. Exit code: 0 stopped (SIGTERM, Ctrl-C) or drained,\n"
      "1 PostgreSQL or Redis unreachable at start, or the schema missing, 2 usage error.");
  cmd->add_option("--dsn", o->dsn,
                  "libpq connection string or URI: 'host=db dbname=tgw user=tgw' or "
                  "postgresql://tgw@db/tgw (PG* environment variables fill in the rest)")
      ->envname("TGW_SINK_DSN")
      ->required();
  cmd->add_flag("--init", o->init,
                "Create the tables (positions, partitioned by day, rejected_entries, "
                "position_devices) and the view last_positions if they are missing, then exit")
      ->envname("TGW_SINK_INIT");
  add_redis_options(cmd, o->redis);
  cmd->add_option("--stream", o->settings.stream,
                  "The telemetry stream; on a Redis Cluster by default every key shard's "
                  "stream, each with a reader of its own")
      ->envname("TGW_SINK_STREAM")
      ->capture_default_str();
  cmd->add_option("--group", o->settings.group, "The consumer group; sinks sharing one share work")
      ->envname("TGW_SINK_GROUP")
      ->capture_default_str();
  cmd->add_option("--consumer", o->settings.consumer,
                  "This sink's name in the group, unique per process (default: host-pid)")
      ->envname("TGW_SINK_CONSUMER");
  cmd->add_option("--from", o->from,
                  "Where a new group starts: start (every record in the stream) or now (only "
                  "those stored from now on); an existing group goes on where it is")
      ->envname("TGW_SINK_FROM")
      ->check(CLI::IsMember({"start", "now"}))
      ->capture_default_str();
  cmd->add_option("--batch", o->settings.batch, "Entries per read and per transaction")
      ->envname("TGW_SINK_BATCH")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--committers", o->committers,
                  "Threads writing batches into PostgreSQL, each on a connection of its own: "
                  "one batch's COMMIT overlaps another's COPY")
      ->envname("TGW_SINK_COMMITTERS")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_option("--block-ms", o->block_ms, "How long one read waits for new entries")
      ->envname("TGW_SINK_BLOCK_MS")
      ->check(CLI::Range(1, 60000))
      ->capture_default_str();
  cmd->add_option("--claim-idle-ms", o->claim_idle_ms,
                  "Take over entries another consumer has held unacknowledged this long")
      ->envname("TGW_SINK_CLAIM_IDLE_MS")
      ->check(CLI::Range(1, 86400000))
      ->capture_default_str();
  cmd->add_option("--claim-interval-ms", o->claim_interval_ms, "How often to look for such entries")
      ->envname("TGW_SINK_CLAIM_INTERVAL_MS")
      ->check(CLI::Range(1, 86400000))
      ->capture_default_str();
  cmd->add_option("--max-record-age-days", o->settings.window.max_age_days,
                  "A record whose time is more than this many days before the gateway stored it "
                  "goes to rejected_entries, not to a day partition of positions (a device "
                  "clock at 1970 or decades off would make one per day)")
      ->envname("TGW_SINK_MAX_RECORD_AGE_DAYS")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{36500}))
      ->capture_default_str();
  cmd->add_option("--max-record-ahead-days", o->settings.window.max_ahead_days,
                  "The same for a record time more than this many days after it was stored")
      ->envname("TGW_SINK_MAX_RECORD_AHEAD_DAYS")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{36500}))
      ->capture_default_str();
  add_io_name_options(cmd, o->io_names, "", false);
  cmd->add_flag("--until-drained", o->settings.until_drained,
                "Stop once a read finds nothing new (for loads and benchmarks)")
      ->envname("TGW_SINK_UNTIL_DRAINED");
  cmd->add_option("--progress-s", o->progress_s, "Seconds between progress lines")
      ->envname("TGW_SINK_PROGRESS_S")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--metrics-addr", o->metrics_addr,
                  "Serve Prometheus metrics, /healthz and /readyz here (host:port); off when "
                  "empty")
      ->envname("TGW_SINK_METRICS_ADDR")
      ->check(listen_address());
  add_metrics_limit_options(cmd, o->metrics_limits, "TGW_SINK");
  add_log_options(cmd, o->log_level, o->log_format);
  cmd->callback([o, &exit_code] { exit_code = run_sink(*o); });
}

}  // namespace tgw::infra
