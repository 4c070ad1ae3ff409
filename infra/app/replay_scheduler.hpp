#pragma once

#include <cstddef>

namespace caf {
class actor_system;
class actor_system_config;
}  // namespace caf

/// The scheduler of an offline replay (run_offline_replay.hpp). A replay gives the
/// actors a capture's bytes one step at a time on a virtual clock, and each step must
/// be finished, every message it caused handled, before the clock moves to the next:
/// CAF's own schedulers run actors on threads of their own and say nothing of when
/// they are done. This one runs them on the thread that asks, one message at a time in
/// the order they were sent, until none has a message left. Timers are kept and never
/// fire: the replay simulates no timeout (docs/CAPTURE.md).
namespace tgw::infra::app {

/// Makes the actor system built from `cfg` run its actors on the replay scheduler.
void use_replay_scheduler(caf::actor_system_config& cfg);

/// Runs, on the calling thread, every actor of `sys` that has a message, and those the
/// messages they send wake, until no actor has one; returns how many runs that took.
/// `sys` must have been built with use_replay_scheduler.
std::size_t run_until_idle(caf::actor_system& sys);

}  // namespace tgw::infra::app
