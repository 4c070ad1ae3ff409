#pragma once

#include <chrono>
#include <memory>

#include <caf/atom.hpp>
#include <caf/fwd.hpp>

#include "actors/registry/registry_config.hpp"
#include "infra/commands/command_store.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/registry/registry_store.hpp"

namespace tgw::actors::registry {

/// (register_atom, std::string imei): a device identified on this instance.
using register_atom = caf::atom_constant<caf::atom("register")>;
/// (unregister_atom, std::string imei): its connection closed, whatever the cause.
using unregister_atom = caf::atom_constant<caf::atom("unregist")>;
/// (unreg_all_atom) -> size_t: owner-checked unregister of every held device (SIGTERM).
using unreg_all_atom = caf::atom_constant<caf::atom("unregall")>;
/// (beat_atom): heartbeat tick.
using beat_atom = caf::atom_constant<caf::atom("beat")>;
/// (sweep_atom): janitor tick.
using sweep_atom = caf::atom_constant<caf::atom("sweep")>;

/// The registry actor: the only writer of this instance's registry entries, so
/// register and unregister of one device can never overtake each other. It keeps the
/// set of devices it holds; when a write fails (Redis down) the device stays accepted,
/// teltonika_registry_failures_total counts it, and once Redis answers again every
/// held device is re-asserted. The same repair runs when the heartbeat finds its own
/// key missing (the instance had been presumed dead). Each heartbeat it also checks
/// that every held device is still in this instance's reverse index, and puts back
/// the entries a stale registration elsewhere took and then deleted. Spawn it detached.
caf::behavior registry_actor(caf::event_based_actor* self, const registry_config& config,
                             const std::shared_ptr<infra::registry::registry_store>& store,
                             const std::shared_ptr<infra::metrics::gateway_counters>& counters);

/// The janitor: every interval, evicts the registry entries of instances whose
/// heartbeat expired, owner-checked, and counts only the deletes it made. It runs in
/// every instance; its effects are idempotent. With `commands`, it also adopts the
/// command streams of dead instances: every entry left there, read or unread, gets one
/// outcome (re-routed to the device's live owner, or failed/instance_lost or
/// expired_before_delivery) and the stream is removed. Spawn it detached.
caf::behavior janitor_actor(caf::event_based_actor* self, const janitor_config& config,
                            const std::shared_ptr<infra::registry::registry_store>& store,
                            const std::shared_ptr<infra::metrics::gateway_counters>& counters,
                            const std::shared_ptr<infra::commands::command_store>& commands = {});

}  // namespace tgw::actors::registry
