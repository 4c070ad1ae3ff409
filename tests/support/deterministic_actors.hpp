#pragma once

// An actor system on CAF 0.17's test_coordinator, for tests of actors' decisions:
// nothing runs until the test says so, and time is virtual. CAF's own test DSL
// crashes under GoogleTest; this is the part of it these tests need.
#include <chrono>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

namespace tgw::test {

struct deterministic_config : caf::actor_system_config {
  deterministic_config() { set("scheduler.policy", caf::atom("testing")); }
};

/// A fixture's base: the system and its scheduler. A fixture that derives from it
/// (beside ::testing::Test) keeps its actor handles in its own members, which are
/// destroyed before the system.
class deterministic_actors {
 protected:
  /// Lets `d` of virtual time pass and runs what became due.
  void wait(std::chrono::milliseconds d) {
    sched.advance_time(d);
    sched.run();
  }

  deterministic_config cfg;
  caf::actor_system sys{cfg};
  caf::scheduler::test_coordinator& sched =
      dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
};

}  // namespace tgw::test
