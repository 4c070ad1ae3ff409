#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "infra/api/access.hpp"
#include "infra/api/api_input.hpp"
#include "infra/api/api_ports.hpp"
#include "infra/api/work_pool.hpp"
#include "infra/http/router.hpp"
#include "infra/http/server_stats.hpp"

namespace tgw::infra::api {

/// How the API behaves; every field is a flag of `tgw api` (docs/API.md).
struct api_settings {
  std::int64_t seen_within_ms = std::int64_t{7} * 24 * 3600 * 1000;
  std::size_t workers = 4;
  std::size_t max_queued = 512;
  std::size_t max_waits = 1000;
  std::int64_t max_wait_s = 60;
  std::chrono::seconds idempotency_ttl{86400};
  command_rules commands;
  /// The OpenAPI document served at /v1/openapi.json.
  std::string openapi;
  /// The instance's name in its metrics and readiness, "api@host:port".
  std::string name;
};

/// What the API's routes reach: the blocking work (its pool of stores), the waits for
/// command outcomes, the event streams, and who may do what. The watcher and the hub
/// may be absent (tests, the fuzzer): waits and events then answer 503.
struct api_parts {
  std::shared_ptr<work_pool> work;
  std::shared_ptr<command_waits> watcher;
  std::shared_ptr<event_streams> events;
  std::shared_ptr<access_control> access;
  /// A fresh command id (commands::new_command_id).
  std::function<std::string()> new_command_id;
  /// What /metrics answers: the Prometheus text of the process; empty: 404.
  std::function<std::string()> metrics;
};

/// The application API's routes on an http::router: /v1/... (docs/api/openapi.json),
/// /healthz, /readyz and /metrics. Each handler runs on an io thread: it checks the
/// caller and the request there, hands the Redis work to the pool, and answers from
/// the worker (or the watcher) through its responder. Nothing of a request is logged
/// above debug.
///
[[nodiscard]] http::router api_routes(const api_settings& settings, api_parts parts);

/// The Prometheus text of /metrics: the API's gauges (from `parts`) and the server's
/// own counters `stats` (requests by route and status, latency, refusals).
[[nodiscard]] std::string api_metrics_text(const api_settings& settings, const api_parts& parts,
                                           const http::server_stats& stats);

/// The request deadline of POST .../commands, which may wait up to max_wait_s: the
/// wait, and time for the publish and the answer.
[[nodiscard]] std::chrono::milliseconds command_route_deadline(const api_settings& settings);

}  // namespace tgw::infra::api
