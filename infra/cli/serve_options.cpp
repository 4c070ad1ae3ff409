#include "infra/cli/serve_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "infra/cli/redis_tls_flags.hpp"
#include "infra/cli/serve_budgets.hpp"
#include "infra/redis/redis_url.hpp"

namespace tgw::infra {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

int cores() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::string default_instance_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const auto started =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  return std::string(host[0] != '\0' ? host : "tgw") + "-" + std::to_string(getpid()) + "-" +
         std::to_string(started);
}

// The device ports: listeners, TLS, PROXY headers and the limits on connections.
bool plan_ports(const serve_options& o, app::gateway_plan& p, std::string& error) {
  p.bind = o.bind;
  p.port = o.port;
  p.tls_port = o.tls_port;
  if (!o.tls_cert.empty())
    p.tls = net::tls_settings{
        o.tls_cert, o.tls_key, o.tls_client_ca,
        o.tls_ciphers.empty() ? net::tls_settings::default_ciphers : o.tls_ciphers};
  const auto proxy = net::parse_proxy_mode(o.proxy_protocol);
  if (!proxy) {
    error = "--proxy-protocol " + o.proxy_protocol + ": expected off, v1, v2 or any";
    return false;
  }
  p.proxy = *proxy;
  std::string prefix_error;
  auto proxy_from = net::parse_prefixes(o.proxy_from, prefix_error);
  if (!proxy_from) {
    error = "--proxy-from " + o.proxy_from + ": " + prefix_error;
    return false;
  }
  p.proxy_from = std::move(*proxy_from);
  p.proxy_from_text = o.proxy_from;
  if (o.tls_port != 0 && o.tls_port == o.port) {
    error = "--tls-port " + std::to_string(o.tls_port) +
            " is --port too; give TLS a port of its own or drop --tls-port";
    return false;
  }
  p.per_address.connections_per_second = o.per_address_rate;
  p.per_address.burst = o.per_address_burst;
  p.per_address.handshakes = o.per_address_handshakes;
  p.per_address.ipv6_prefix = static_cast<unsigned>(o.per_address_ipv6_prefix);
  p.limits.max_frame_size = o.max_frame_size;
  p.limits.first_byte_timeout = milliseconds{o.first_byte_timeout_ms};
  p.limits.handshake_timeout = milliseconds{o.handshake_timeout_ms};
  p.limits.idle_timeout = seconds{o.idle_timeout_s};
  p.limits.max_connections = o.max_connections;
  p.limits.max_frames_in_flight = o.max_frames_in_flight;
  p.udp.idle_timeout = seconds{o.udp_idle_timeout_s > 0 ? o.udp_idle_timeout_s : o.idle_timeout_s};
  return plan_budgets(o, p, error);
}

// Redis: a parsed URL, or none for the private redis-server.
bool plan_redis(const serve_options& o, app::gateway_plan& p, std::string& error) {
  if (!o.redis_url.empty()) {
    std::string url_error;
    p.redis = redis::parse_redis_url(o.redis_url, url_error);
    if (!p.redis) {
      error = "--redis: " + url_error;
      return false;
    }
    if (!apply_redis_tls(o.redis_tls, *p.redis, error)) return false;
  } else if (o.redis_tls != redis::tls_options{}) {
    error =
        "--redis-tls-* options are for a rediss:// --redis; the private redis-server is "
        "reached on a unix socket";
    return false;
  }
  if (o.telemetry_shards > 0 && !(p.redis && p.redis->via_cluster())) {
    error =
        "--telemetry-shards: only a Redis Cluster (redis+cluster://) splits keys in shards; a "
        "single node keeps one telemetry stream";
    return false;
  }
  p.data_dir = o.data_dir;
  p.embedded_redis_restarts = o.embedded_redis_restarts;
  p.telemetry_shards = o.telemetry_shards;
  return true;
}

// Threads. Half the cores for each pool by default: a gateway usually shares its host
// with Redis, and on two cores one thread per pool spent about a tenth less CPU per
// packet than two (fewer hand-offs between sleeping threads) for the same work.
// Writers are at least two on one server: a writer waits for its pipeline's replies
// before it sends the next batch, and a second one keeps Redis busy meanwhile (a fifth
// more records/s with 10-record packets on two cores, for a few percent more CPU). On a
// Redis Cluster one writer's round trip is already a pipeline to every master at once,
// and each round trip costs a send and a wake-up per master: a second writer doubled
// them for no more throughput (8 % more gateway CPU a packet than one server at 12,500
// packets/s, against 1-4 % less with one writer; docs/PERFORMANCE.md, "Redis Cluster").
void plan_threads(const serve_options& o, app::gateway_plan& p) {
  const int half = std::max(1, cores() / 2);
  const bool cluster = p.redis && p.redis->via_cluster();
  p.io_threads = o.io_threads > 0 ? o.io_threads : half;
  p.actor_threads = o.actor_threads > 0 ? o.actor_threads : half;
  p.writer_shards = o.writer_shards > 0 ? o.writer_shards : std::max(cluster ? 1 : 2, half);
  p.scheduler = o.actor_scheduler == "stealing" ? app::actor_scheduler::stealing
                                                : app::actor_scheduler::sharing;
  p.cpu = process::parse_cpu_policy(o.cpu_policy).value_or(process::cpu_policy::keep);
}

// Persisting, and the actors beside the sessions.
void plan_actors(const serve_options& o, app::gateway_plan& p) {
  const milliseconds log_interval = seconds{o.failure_log_interval_s};
  p.crc = o.crc == "ignore" ? codecs::crc_policy::ignore : codecs::crc_policy::strict;
  p.journal_maxlen = o.journal_maxlen;
  p.telemetry_maxlen = o.telemetry_maxlen;
  p.ack_replicas = o.ack_replicas;
  p.ack_replicas_timeout = milliseconds{o.ack_replicas_timeout_ms};
  p.writer.linger = std::chrono::microseconds{o.writer_linger_us};
  p.writer.persist_retry = milliseconds{o.persist_retry_ms};
  p.readiness_window = milliseconds{o.readiness_window_ms};
  p.failure_log_interval = seconds{o.failure_log_interval_s};
  p.registry.heartbeat_interval = milliseconds{o.heartbeat_interval_ms};
  p.registry.heartbeat_ttl = seconds{o.heartbeat_ttl_s};
  p.registry.failure_log_interval = log_interval;
  p.janitor.interval = milliseconds{o.janitor_interval_ms};
  p.janitor.mode =
      o.janitor_mode == "scan" ? ports::janitor_mode::scan : ports::janitor_mode::reverse_index;
  p.command_reader.journal_maxlen = o.journal_maxlen;
  p.command_reader.failure_log_interval = log_interval;
  p.command_responder.journal_maxlen = o.journal_maxlen;
  p.command_responder.failure_log_interval = log_interval;
  p.retention.trim = o.telemetry_retention == "groups";
  p.retention.interval = milliseconds{o.telemetry_retention_interval_ms};
  p.retention.ungrouped.maxlen = o.telemetry_ungrouped_maxlen;
  p.retention.warn_interval = log_interval;
  p.command_queue = o.command_queue;
  p.command_timeout = milliseconds{o.command_timeout_ms};
  p.command_max_payload = o.command_max_payload;
}

}  // namespace

const app::gateway_plan& gateway_defaults() {
  static const app::gateway_plan defaults;
  return defaults;
}

std::optional<app::gateway_plan> plan_gateway(const serve_options& o, std::string& error) {
  app::gateway_plan p;
  p.instance_id = o.instance_id.empty() ? default_instance_id() : o.instance_id;
  if (!plan_ports(o, p, error) || !plan_redis(o, p, error)) return std::nullopt;
  p.allowlist_file = o.allowlist_file;
  p.allowlist_redis = o.allowlist_redis;
  p.allowlist_refresh = seconds{o.allowlist_refresh_s};
  plan_threads(o, p);
  plan_actors(o, p);
  if (!o.capture_dir.empty())
    p.capture =
        capture::rotation_policy{o.capture_dir, o.capture_max_file_mb << 20,
                                 seconds{o.capture_max_age_s}, o.capture_max_total_mb << 20};
  p.metrics_addr = o.metrics_addr;
  p.metrics_limits = o.metrics_limits;
  if (!o.api.listen.empty()) {
    api::api_server_settings api = o.api;
    if (!apply_api_flags(o.api_flags, api, error)) return std::nullopt;
    if (const std::string problem = api::settings_problem(api); !problem.empty()) {
      error = problem;
      return std::nullopt;
    }
    p.api = std::move(api);
  }
  p.drain_timeout = milliseconds{o.drain_timeout_ms};
  return p;
}

}  // namespace tgw::infra
