#include "infra/app/gateway_actors.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/commands/command_atoms.hpp"
#include "actors/commands/command_reader.hpp"
#include "actors/commands/command_responder.hpp"
#include "actors/gateway/gateway_atoms.hpp"
#include "actors/gateway/retention_actor.hpp"
#include "actors/gateway/session.hpp"
#include "actors/gateway/session_directory.hpp"
#include "actors/gateway/telemetry_writer.hpp"
#include "actors/gateway/udp_ingest.hpp"
#include "actors/ports/telemetry_store.hpp"
#include "actors/registry/registry_actor.hpp"
#include "infra/commands/redis_command_store.hpp"
#include "infra/registry/redis_registry_store.hpp"
#include "infra/telemetry/redis_retention_store.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra::app {
namespace {

using namespace std::chrono_literals;

caf::actor_system_config& configure(caf::actor_system_config& cfg, const gateway_plan& plan) {
  cfg.set("scheduler.max-threads", plan.actor_threads);
  cfg.set("scheduler.policy", plan.scheduler == actor_scheduler::stealing ? caf::atom("stealing")
                                                                          : caf::atom("sharing"));
  return cfg;
}

}  // namespace

struct gateway_actors::impl {
  explicit impl(const gateway_plan& plan) : system(configure(cfg, plan)) {}

  // The system keeps a reference to its configuration.
  caf::actor_system_config cfg;
  caf::actor_system system;
  actors::registry::registry_actor registry;
  actors::registry::janitor_actor janitor;
  actors::commands::command_responder_actor responder;
  actors::commands::command_reader_actor reader;
  actors::gateway::udp_ingest_actor udp;
  /// Every long-lived actor, whatever its interface, for stop(): it is only told to
  /// exit and waited for, never sent a message.
  std::vector<caf::strong_actor_ptr> all;
  std::shared_ptr<actors::gateway::session_directory> directory =
      std::make_shared<actors::gateway::session_directory>();
  std::shared_ptr<actors::gateway::retention_status> retention =
      std::make_shared<actors::gateway::retention_status>();
  std::shared_ptr<const actors::gateway::session_config> sessions;
  std::shared_ptr<domain::udp_backlog> udp_backlog;

  template <class Handle>
  Handle add(Handle handle) {
    all.push_back(caf::actor_cast<caf::strong_actor_ptr>(handle));
    return handle;
  }
};

gateway_actors::gateway_actors(const gateway_plan& plan, const gateway_redis& redis,
                               std::shared_ptr<metrics::gateway_counters> counters,
                               std::shared_ptr<domain::persist_health> health,
                               std::shared_ptr<const domain::allowlist> allowlist)
    : impl_(std::make_unique<impl>(plan)) {
  namespace gw = actors::gateway;
  auto& system = impl_->system;
  auto registry_store = [&](const char* role) {
    return std::make_shared<registry::redis_registry_store>(redis.connection(role), redis.instance,
                                                            redis.key_shards, redis.holder);
  };
  auto command_store = [&](const char* role, std::chrono::milliseconds io_timeout) {
    return std::make_shared<commands::redis_command_store>(
        redis.connection(role, io_timeout), redis.instance, plan.command_max_payload,
        redis.key_shards, plan.allow_command_control_chars);
  };
  impl_->registry = impl_->add(system.spawn<caf::detached>(
      actors::registry::registry, plan.registry, registry_store("registry"), counters));
  impl_->janitor = impl_->add(system.spawn<caf::detached>(
      actors::registry::janitor, plan.janitor, registry_store("janitor"), counters,
      command_store("janitor-commands", 5000ms)));
  // A response is a promise to a waiting publisher, like an ACK to a device: with
  // --ack-replicas it counts as published only once replicas hold it.
  auto responder_store = command_store("responder", 5000ms);
  responder_store->require_replicas(plan.ack_replicas, plan.ack_replicas_timeout);
  impl_->responder = impl_->add(system.spawn<caf::detached>(
      actors::commands::command_responder, plan.command_responder, responder_store, counters));
  // Telemetry retention: every instance watches the consumer groups (lag metrics) and,
  // with --telemetry-retention groups, trims what they all acknowledged.
  gw::retention_config retention = plan.retention;
  retention.streams.clear();
  for (std::uint32_t s = 0; s < redis.key_shards.count(); ++s)
    retention.streams.push_back(telemetry::keys::telemetry_stream_in(redis.key_shards.prefix(s)));
  impl_->add(system.spawn<caf::detached>(
      gw::retention, retention,
      std::make_shared<telemetry::redis_retention_store>(redis.connection("retention")),
      impl_->retention));
  // Outbound commands. The reader's socket timeout exceeds its BLOCK (1 s), or hiredis
  // would give up on a read the server still holds.
  impl_->reader = impl_->add(system.spawn<caf::detached>(
      actors::commands::command_reader, plan.command_reader, command_store("reader", 3000ms),
      std::shared_ptr<const actors::commands::session_lookup>(impl_->directory), counters));

  auto config = std::make_shared<gw::session_config>();
  config->registry = impl_->registry;
  config->instance_id = redis.instance;
  config->crc = plan.crc;
  config->allowlist = std::move(allowlist);
  config->counters = counters;
  config->directory = impl_->directory;
  config->responder = impl_->responder;
  config->command_queue_limit = plan.command_queue;
  config->command_timeout = plan.command_timeout;
  config->max_bad_frames = plan.max_bad_frames;
  gw::writer_config writing = plan.writer;
  writing.health = std::move(health);
  for (int i = 0; i < plan.writer_shards; ++i)
    config->writers.push_back(impl_->add(system.spawn<caf::detached>(
        gw::telemetry_writer, writing, redis.telemetry_store(plan, i), i, counters)));
  impl_->sessions = config;
  // UDP datagrams of every device go through one actor; the io thread stops handing
  // them on while it is behind by --udp-backlog.
  gw::udp_config udp = plan.udp;
  impl_->udp_backlog = std::make_shared<domain::udp_backlog>(plan.udp_backlog);
  udp.backlog = impl_->udp_backlog;
  impl_->udp = impl_->add(system.spawn(gw::udp_ingest, impl_->sessions, udp));
}

gateway_actors::~gateway_actors() = default;

net::listener_factory gateway_actors::session_factory() const {
  return [system = &impl_->system,
          config = impl_->sessions](std::shared_ptr<ports::device_link> link) {
    auto actor = system->spawn(actors::gateway::session, link, config);
    return actors::gateway::make_session_listener(actor);
  };
}

net::udp_server::handler gateway_actors::udp_handler() const {
  return [udp = impl_->udp](std::vector<std::uint8_t> datagram, ports::udp_reply reply,
                            std::string peer) {
    caf::anon_send(udp, actors::gateway::datagram_atom::value, std::move(datagram),
                   std::move(reply), std::move(peer));
  };
}

std::shared_ptr<domain::udp_backlog> gateway_actors::udp_backlog() const {
  return impl_->udp_backlog;
}

std::shared_ptr<const actors::gateway::session_directory> gateway_actors::directory() const {
  return impl_->directory;
}

std::shared_ptr<const actors::gateway::retention_status> gateway_actors::retention() const {
  return impl_->retention;
}

void gateway_actors::close_udp(const std::string& reason) {
  caf::anon_send(impl_->udp, actors::gateway::closed_atom::value, reason);
}

void gateway_actors::leave() {
  impl& a = *impl_;
  {
    caf::scoped_actor self{a.system};
    // Every held device, owner-checked: one that already moved keeps its entry.
    self->request(a.registry, 10s, actors::registry::unreg_all_atom::value)
        .receive([](std::size_t) {},
                 [](const caf::error& e) {
                   spdlog::error("registry: unregister at shutdown: {}", caf::to_string(e));
                 });
    // Closed sessions failed their commands (socket_closed); publish those answers
    // before leaving. What cannot be published stays pending in the stream, and the
    // janitor of another instance answers it once this one's heartbeat expires.
    self->request(a.responder, 5s, actors::commands::sync_atom::value)
        .receive(
            [](bool all_published) {
              if (!all_published)
                spdlog::warn("commands: some responses unpublished at shutdown (Redis down)");
            },
            [](const caf::error& e) {
              spdlog::warn("commands: responder at shutdown: {}", caf::to_string(e));
            });
  }
  const auto stop = [&a](const auto&... actors) {
    (caf::anon_send_exit(actors, caf::exit_reason::user_shutdown), ...);
    caf::scoped_actor self{a.system};
    self->wait_for(actors...);
  };
  stop(a.registry, a.janitor, a.reader, a.responder);
}

void gateway_actors::stop() {
  for (const auto& actor : impl_->all) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  caf::scoped_actor self{impl_->system};
  self->wait_for(impl_->all);
}

void gateway_actors::await_all() {
  impl_->system.await_all_actors_done();
}

}  // namespace tgw::infra::app
