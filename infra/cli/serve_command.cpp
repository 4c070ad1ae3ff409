#include "infra/cli/serve_command.hpp"
#include "infra/cli/listen_address.hpp"
#include "infra/cli/log_options.hpp"
#include "infra/cli/metrics_limit_options.hpp"
#include "infra/cli/redis_tls_flags.hpp"
#include "infra/cli/serve_budgets.hpp"
#include "infra/cli/serve_options.hpp"
#include "infra/cli/value_checks.hpp"

#include <memory>

#include <CLI/CLI.hpp>

#include "infra/log/log.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/process/cpu_policy.hpp"

namespace tgw::infra {

void add_serve_command(CLI::App& app, const serve_runner& run, int& exit_code) {
  auto o = std::make_shared<serve_options>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Run one gateway instance: accept Teltonika devices on --port, persist their records\n"
      "to Redis and ACK only after that. Without --redis it starts and supervises a private\n"
      "redis-server on a unix socket in --data-dir. Stops cleanly on SIGINT/SIGTERM.");
  cmd->add_option("--bind", o->bind, "Address for device connections")
      ->envname("TGW_BIND")
      ->capture_default_str();
  cmd->add_option("--port", o->port, "Device port, TCP and UDP (0: any free port)")
      ->envname("TGW_PORT")
      ->capture_default_str();
  cmd->add_option("--redis", o->redis_url,
                  "redis://[user:password@]host:port/db, unix:///path?db=N or "
                  "redis+sentinel://[user:password@]host:port[,host:port...]/MASTER[?db=N] or "
                  "redis+cluster://[user:password@]host:port[,host:port...] (rediss... for "
                  "TLS); default: private redis-server in --data-dir")
      ->envname("TGW_REDIS")
      ->check(redis_url_check());
  add_redis_tls_options(cmd, o->redis_tls);
  cmd->add_option("--data-dir", o->data_dir, "Directory of the private redis-server")
      ->envname("TGW_DATA_DIR")
      ->capture_default_str();
  cmd->add_option("--instance-id", o->instance_id, "Instance id (default: host-pid-start time)")
      ->envname("TGW_INSTANCE_ID");
  cmd->add_option("--metrics-addr", o->metrics_addr,
                  "Prometheus endpoint, /healthz and /readyz: host:port; empty: off")
      ->envname("TGW_METRICS_ADDR")
      ->check(listen_address())
      ->capture_default_str();
  add_metrics_limit_options(cmd, o->metrics_limits);
  add_api_options(cmd, o->api, o->api_flags, "TGW_API", true);
  cmd->add_option("--io-threads", o->io_threads, "Socket threads (0: half the cores)")
      ->envname("TGW_IO_THREADS")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  cmd->add_option("--actor-threads", o->actor_threads, "CAF scheduler threads (0: half the cores)")
      ->envname("TGW_ACTOR_THREADS")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  cmd->add_option("--actor-scheduler", o->actor_scheduler,
                  "CAF scheduler: sharing (one queue, workers sleep until woken) or stealing "
                  "(per-worker queues, idle workers poll)")
      ->envname("TGW_ACTOR_SCHEDULER")
      ->check(CLI::IsMember({"sharing", "stealing"}))
      ->capture_default_str();
  cmd->add_option("--cpu-policy", o->cpu_policy,
                  "Kernel scheduling of the gateway's threads: batch (SCHED_BATCH: a woken "
                  "thread does not preempt a running one; fewer context switches under load), "
                  "normal, or keep (whatever the process was started with)")
      ->envname("TGW_CPU_POLICY")
      ->check(CLI::IsMember(process::cpu_policy_names()))
      ->capture_default_str();
  cmd->add_option(
         "--writer-shards", o->writer_shards,
         "Telemetry writers, each with its own Redis connection (0: half the cores, at least 2; "
         "at least 1 on a Redis Cluster)")
      ->envname("TGW_WRITER_SHARDS")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd->add_option("--writer-linger-us", o->writer_linger_us,
                  "How long a telemetry writer holds a batch that is not full for more "
                  "writes before sending it to Redis (0: send at once)")
      ->envname("TGW_WRITER_LINGER_US")
      ->check(CLI::Range(0, 100'000))
      ->capture_default_str();
  cmd->add_option("--crc", o->crc, "strict: bad CRC gets no ACK; ignore: accept and flag")
      ->envname("TGW_CRC")
      ->check(CLI::IsMember({"strict", "ignore"}))
      ->capture_default_str();
  auto* allowlist_file =
      cmd->add_option("--allowlist", o->allowlist_file,
                      "File of allowed IMEIs, one per line; re-read on SIGHUP, and devices no "
                      "longer listed are disconnected")
          ->envname("TGW_ALLOWLIST")
          ->check(CLI::ExistingFile);
  cmd->add_flag("--allowlist-redis", o->allowlist_redis,
                "Allowed IMEIs are the members of the Redis SET devices:allowed, shared by "
                "every instance; re-read every --allowlist-refresh-s and on SIGHUP")
      ->envname("TGW_ALLOWLIST_REDIS")
      ->excludes(allowlist_file);
  cmd->add_option("--allowlist-refresh-s", o->allowlist_refresh_s,
                  "How often the Redis allowlist is read again")
      ->envname("TGW_ALLOWLIST_REFRESH_S")
      ->check(CLI::Range(1, 86'400))
      ->capture_default_str();
  auto* tls_cert = cmd->add_option("--tls-cert", o->tls_cert,
                                   "PEM certificate chain for TLS on the device port; re-read "
                                   "on SIGHUP (open connections keep theirs)")
                       ->envname("TGW_TLS_CERT");
  auto* tls_key = cmd->add_option("--tls-key", o->tls_key, "PEM private key of --tls-cert")
                      ->envname("TGW_TLS_KEY");
  tls_cert->needs(tls_key);
  tls_key->needs(tls_cert);
  cmd->add_option("--tls-client-ca", o->tls_client_ca,
                  "PEM CA certificates: devices must present a certificate they signed")
      ->envname("TGW_TLS_CLIENT_CA")
      ->needs(tls_cert);
  cmd->add_option("--tls-ciphers", o->tls_ciphers,
                  std::string("OpenSSL cipher list for TLS 1.2 (default: ") +
                      net::tls_settings::default_ciphers + ")")
      ->envname("TGW_TLS_CIPHERS")
      ->needs(tls_cert);
  cmd->add_option("--tls-handshakes", o->tls_handshakes,
                  "TLS handshakes running at once over the instance; more wait their turn "
                  "(within --handshake-timeout-ms). A connection takes a slot once its "
                  "ClientHello is whole. Each holds about 45 KiB while it runs, and a storm "
                  "of reconnects would otherwise leave that behind (0: no limit)")
      ->envname("TGW_TLS_HANDSHAKES")
      ->capture_default_str()
      ->needs(tls_cert);
  cmd->add_option("--tls-port", o->tls_port,
                  "Serve TLS on this TCP port and keep --port plain; without it, --port "
                  "speaks TLS when --tls-cert is given")
      ->envname("TGW_TLS_PORT")
      ->needs(tls_cert);
  cmd->add_option("--proxy-protocol", o->proxy_protocol,
                  "PROXY protocol header required before the device's bytes on the TCP "
                  "ports: off, v1, v2 or any (behind HAProxy, nginx stream, a cloud L4 "
                  "balancer); the device's own address then reaches logs, journal, captures")
      ->envname("TGW_PROXY_PROTOCOL")
      ->check(CLI::IsMember({"off", "v1", "v2", "any"}))
      ->capture_default_str();
  cmd->add_option("--proxy-from", o->proxy_from,
                  "CIDR[,CIDR...] of the balancers: with --proxy-protocol, a connection "
                  "from any other address is closed unread and counted (its header could "
                  "name any address)")
      ->envname("TGW_PROXY_FROM")
      ->capture_default_str();
  cmd->add_option("--per-address-rate", o->per_address_rate,
                  "New connections per second one source address may open (0: no limit). "
                  "The address is the PROXY header's when there is one; only "
                  "--trusted-sources are exempt")
      ->envname("TGW_PER_ADDRESS_RATE")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--per-address-burst", o->per_address_burst,
                  "Connections one address may open at once after a quiet spell")
      ->envname("TGW_PER_ADDRESS_BURST")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--per-address-handshakes", o->per_address_handshakes,
                  "Connections of one source address still in their handshake (PROXY, TLS, "
                  "IMEI) at once (0: no limit); well below --tls-handshakes, so that a few "
                  "addresses cannot hold every slot")
      ->envname("TGW_PER_ADDRESS_HANDSHAKES")
      ->capture_default_str();
  cmd->add_option("--per-address-ipv6-prefix", o->per_address_ipv6_prefix,
                  "IPv6 sources are one address to the per-address limits per prefix of "
                  "this many bits (a host is commonly given a whole /64)")
      ->envname("TGW_PER_ADDRESS_IPV6_PREFIX")
      ->check(CLI::Range(1, 128))
      ->capture_default_str();
  cmd->add_option("--max-frame-size", o->max_frame_size, "Largest frame accepted, bytes")
      ->envname("TGW_MAX_FRAME_SIZE")
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--first-byte-timeout-ms", o->first_byte_timeout_ms,
                  "Time a new connection has to send its first byte (a PROXY header, the "
                  "balancer's, does not count)")
      ->envname("TGW_FIRST_BYTE_TIMEOUT_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--handshake-timeout-ms", o->handshake_timeout_ms,
                  "Time a new connection has to send its IMEI")
      ->envname("TGW_HANDSHAKE_TIMEOUT_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--idle-timeout-s", o->idle_timeout_s, "Silence after which a socket is closed")
      ->envname("TGW_IDLE_TIMEOUT_S")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--udp-idle-timeout-s", o->udp_idle_timeout_s,
                  "Silence after which a UDP device is journaled as disconnected (0: "
                  "--idle-timeout-s)")
      ->envname("TGW_UDP_IDLE_TIMEOUT_S")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--max-connections", o->max_connections, "Open device connections at most")
      ->envname("TGW_MAX_CONNECTIONS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--max-frames-in-flight", o->max_frames_in_flight,
                  "Frames per connection awaiting persistence before reading stops")
      ->envname("TGW_MAX_FRAMES_IN_FLIGHT")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
      ->capture_default_str();
  cmd->add_option("--journal-maxlen", o->journal_maxlen, "Events kept per device journal (~)")
      ->envname("TGW_JOURNAL_MAXLEN")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--telemetry-maxlen", o->telemetry_maxlen,
                  "Also trim the telemetry stream to about this many entries, read or not: "
                  "a cap that drops unread records (0: no cap)")
      ->envname("TGW_TELEMETRY_MAXLEN")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--telemetry-retention", o->telemetry_retention,
                  "groups: trim telemetry:records below what every consumer group has "
                  "acknowledged (nothing while there is no group); off: never trim by groups "
                  "(docs/TELEMETRY.md)")
      ->envname("TGW_TELEMETRY_RETENTION")
      ->check(CLI::IsMember({"groups", "off"}))
      ->capture_default_str();
  cmd->add_option("--telemetry-ungrouped-maxlen", o->telemetry_ungrouped_maxlen,
                  "With --telemetry-retention groups: entries a telemetry stream keeps while "
                  "it has no consumer group (0: no bound); fewer while Redis nears its "
                  "maxmemory, so that a consumer can still join (docs/TELEMETRY.md)")
      ->envname("TGW_TELEMETRY_UNGROUPED_MAXLEN")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--telemetry-retention-interval-ms", o->telemetry_retention_interval_ms,
                  "How often the consumer groups are read and the stream trimmed")
      ->envname("TGW_TELEMETRY_RETENTION_INTERVAL_MS")
      ->check(CLI::Range(100, 3'600'000))
      ->capture_default_str();
  cmd->add_option("--telemetry-shards", o->telemetry_shards,
                  "Redis Cluster only: the telemetry streams and device key shards the keys "
                  "are split into; every gateway of the cluster must use the same count. 0: "
                  "the count the cluster stored (tgw:telemetry-shards), or 4 per master for "
                  "the first gateway (docs/CLUSTER.md)")
      ->envname("TGW_TELEMETRY_SHARDS")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--ack-replicas", o->ack_replicas,
                  "ACK a packet only after WAIT confirms its batch on this many replicas; a "
                  "shortfall is a persist failure (no ACK, the device resends). 0: ACK on the "
                  "master's word alone (docs/OPERATIONS.md says what each setting guarantees)")
      ->envname("TGW_ACK_REPLICAS")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  cmd->add_option("--ack-replicas-timeout-ms", o->ack_replicas_timeout_ms,
                  "How long a writer's WAIT may block for --ack-replicas")
      ->envname("TGW_ACK_REPLICAS_TIMEOUT_MS")
      ->check(CLI::Range(1, 60'000))
      ->capture_default_str();
  cmd->add_option("--persist-retry-ms", o->persist_retry_ms,
                  "A write that failed where sending it again is safe (its Redis Cluster slot "
                  "moved, its master is being replaced by a replica, Redis refused the "
                  "connection) is held and sent again for this long before the device goes "
                  "un-ACKed; keep it below the devices' ACK timeout (0: never held)")
      ->envname("TGW_PERSIST_RETRY_MS")
      ->check(CLI::Range(0, 600'000))
      ->capture_default_str();
  cmd->add_option("--drain-timeout-ms", o->drain_timeout_ms,
                  "On SIGTERM, time to finish persisting and ACKing what is in flight")
      ->envname("TGW_DRAIN_TIMEOUT_MS")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_option("--readiness-window-ms", o->readiness_window_ms,
                  "/readyz answers 503 once persisting has failed for every attempt (or a "
                  "Redis round trip has hung) this long, whatever the cause; 200 again at the "
                  "first success")
      ->envname("TGW_READINESS_WINDOW_MS")
      ->check(CLI::Range(100, 600'000))
      ->capture_default_str();
  cmd->add_option("--failure-log-interval-s", o->failure_log_interval_s,
                  "A Redis failure that goes on (persist, heartbeat, registry, commands) is "
                  "logged at warn when it starts, then at most once per this many seconds "
                  "and cause, with counts, and once when it ends")
      ->envname("TGW_FAILURE_LOG_INTERVAL_S")
      ->check(CLI::Range(1, 86'400))
      ->capture_default_str();
  cmd->add_option("--embedded-redis-restarts", o->embedded_redis_restarts,
                  "Without --redis: restarts of the private redis-server (on its data dir, "
                  "after it dies) that may fail in a row (it does not come up) before the "
                  "gateway exits 1 for its supervisor to act; a restart that brings it up "
                  "resets the count")
      ->envname("TGW_EMBEDDED_REDIS_RESTARTS")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--heartbeat-interval-ms", o->heartbeat_interval_ms,
                  "How often instance:heartbeat:{id} is refreshed")
      ->envname("TGW_HEARTBEAT_INTERVAL_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--heartbeat-ttl-s", o->heartbeat_ttl_s, "TTL of the heartbeat key")
      ->envname("TGW_HEARTBEAT_TTL_S")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--janitor-interval-ms", o->janitor_interval_ms,
                  "Janitor period: entries of dead instances are evicted this often (also "
                  "read from JANITOR_INTERVAL_MS)")
      ->envname("TGW_JANITOR_INTERVAL_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--janitor-mode", o->janitor_mode,
                  "reverse-index (instance:devices:{id}) or scan (HSCAN the registry)")
      ->envname("TGW_JANITOR_MODE")
      ->check(CLI::IsMember({"reverse-index", "scan"}))
      ->capture_default_str();
  cmd->add_option("--command-timeout-ms", o->command_timeout_ms,
                  "Time a device has to answer a command before it fails with timeout")
      ->envname("TGW_COMMAND_TIMEOUT_MS")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--command-queue", o->command_queue,
                  "Commands per device queued or in flight; more fail with write_queue_full")
      ->envname("TGW_COMMAND_QUEUE")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--command-max-payload", o->command_max_payload,
                  "Largest command text in bytes; longer entries fail as malformed")
      ->envname("TGW_COMMAND_MAX_PAYLOAD")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--capture-dir", o->capture_dir,
                  "Record every device connection, both directions, into pcap files here "
                  "(docs/CAPTURE.md); empty: off")
      ->envname("TGW_CAPTURE_DIR");
  cmd->add_option("--capture-max-file-mb", o->capture_max_file_mb,
                  "Start a new capture file when the current one reaches this size")
      ->envname("TGW_CAPTURE_MAX_FILE_MB")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--capture-max-age-s", o->capture_max_age_s,
                  "Start a new capture file when the current one is this old")
      ->envname("TGW_CAPTURE_MAX_AGE_S")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--capture-max-total-mb", o->capture_max_total_mb,
                  "Delete the oldest capture files when all of them exceed this size")
      ->envname("TGW_CAPTURE_MAX_TOTAL_MB")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30))
      ->capture_default_str();
  add_budget_options(cmd, o->budget);
  add_log_options(cmd, o->log_level, o->log_format);
  cmd->callback([o, run, &exit_code] {
    setup_logging(o->log_level, o->log_format);
    std::string error;
    const auto plan = plan_gateway(*o, error);
    if (!plan) {
      spdlog::error("{}", error);
      exit_code = 2;
      return;
    }
    exit_code = run(*plan);
  });
}

}  // namespace tgw::infra
