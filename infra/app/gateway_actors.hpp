#pragma once

#include <memory>
#include <string>

#include "actors/domain/allowlist.hpp"
#include "actors/domain/persist_health.hpp"
#include "actors/gateway/retention_status.hpp"
#include "infra/app/gateway_plan.hpp"
#include "infra/app/gateway_redis.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/net/tcp_server.hpp"
#include "infra/net/udp_server.hpp"

namespace tgw::actors::gateway {
class session_directory;
}

namespace tgw::infra::app {

/// The actor side of one gateway instance: its actor system and every long-lived actor
/// (registry, janitor, command reader and responder, telemetry retention, the telemetry
/// writer shards, UDP ingest). Each device connection gets a session actor from
/// session_factory(). CAF stays inside (gateway_actors.cpp).
class gateway_actors {
 public:
  /// Starts the actor system and spawns every long-lived actor, each with its own
  /// Redis connection; the registry writes the heartbeat at once.
  gateway_actors(const gateway_plan& plan, const gateway_redis& redis,
                 std::shared_ptr<metrics::gateway_counters> counters,
                 std::shared_ptr<domain::persist_health> health,
                 std::shared_ptr<const domain::allowlist> allowlist);
  /// Waits for every actor (the actor system's destructor does).
  ~gateway_actors();
  gateway_actors(const gateway_actors&) = delete;
  gateway_actors& operator=(const gateway_actors&) = delete;

  /// Makes the session actor of a new device connection.
  [[nodiscard]] net::listener_factory session_factory() const;
  /// Hands every UDP datagram to the one UDP ingest actor.
  [[nodiscard]] net::udp_server::handler udp_handler() const;
  /// What the UDP actor has yet to take up of what udp_handler() handed it.
  [[nodiscard]] std::shared_ptr<domain::udp_backlog> udp_backlog() const;
  /// Where sessions announce themselves, for the allowlist keeper.
  [[nodiscard]] std::shared_ptr<const actors::gateway::session_directory> directory() const;
  /// What the retention actor saw last, for the metrics.
  [[nodiscard]] std::shared_ptr<const actors::gateway::retention_status> retention() const;

  /// Every UDP device is gone, for `reason` (the UDP actor journals it).
  void close_udp(const std::string& reason);
  /// At shutdown, once the sessions closed: unregisters every held device
  /// (owner-checked), publishes the answers of the commands the closed sessions failed,
  /// then stops the registry, the janitor and the command reader and responder.
  void leave();
  /// Stops every long-lived actor and waits for them. A start-up failure calls it too,
  /// or the actor system's destructor, which waits for every actor, would never return.
  void stop();
  /// Waits until every actor, each session included, is done.
  void await_all();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tgw::infra::app
