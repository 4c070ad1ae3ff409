// The registry and janitor actors' decisions, on CAF's deterministic scheduler and an
// in-memory registry (tests/support/fake_registry_store.hpp): repair after an outage,
// re-assertion after a lapsed heartbeat without taking a live instance's devices, the
// index check that finds a device whose entry a stale session deleted, and a janitor
// that evicts only what a dead instance still holds. What Redis itself does with these
// calls is tested against a redis-server in tests/infra/registry.
#include <gtest/gtest.h>
#include <caf/all.hpp>

#include "actors/registry/registry_actor.hpp"
#include "tests/support/deterministic_actors.hpp"
#include "tests/support/fake_registry_store.hpp"

namespace tgw::actors::registry {
namespace {

using namespace std::chrono_literals;

constexpr const char* imei_1 = "356307042441013";
constexpr const char* imei_2 = "356307042441021";

class RegistryLogic : public ::testing::Test, protected test::deterministic_actors {
 protected:
  ~RegistryLogic() override {
    for (const auto& a : registries) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    for (const auto& a : janitors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
  }
  registry_actor start_registry(const std::string& instance) {
    registries.push_back(sys.spawn(registry, config, store(instance), counters));
    sched.run();  // the first heartbeat
    return registries.back();
  }
  janitor_actor start_janitor(const std::string& instance) {
    janitors.push_back(sys.spawn(janitor, janitor_config{}, store(instance), counters,
                                 std::shared_ptr<ports::command_store>()));
    sched.run();
    return janitors.back();
  }
  std::shared_ptr<test::fake_registry_store> store(const std::string& instance) {
    return std::make_shared<test::fake_registry_store>(world, instance);
  }
  void tell(const registry_actor& a, bool registering, const char* imei) {
    if (registering)
      caf::anon_send(a, register_atom::value, std::string(imei));
    else
      caf::anon_send(a, unregister_atom::value, std::string(imei));
    sched.run();
  }

  std::shared_ptr<test::fake_registry> world = std::make_shared<test::fake_registry>();
  registry_config config;
  std::shared_ptr<infra::metrics::gateway_counters> counters =
      std::make_shared<infra::metrics::gateway_counters>();
  std::vector<registry_actor> registries;
  std::vector<janitor_actor> janitors;
};

TEST_F(RegistryLogic, DevicesRegisteredDuringAnOutageAreWrittenOnceTheStoreAnswers) {
  world->down = true;
  const registry_actor a = start_registry("A");
  tell(a, true, imei_1);
  tell(a, true, imei_2);
  EXPECT_EQ(world->owner_of(imei_1), "(nil)");
  EXPECT_GE(counters->registry_failures.load(), 3U);  // the heartbeat and both registers
  EXPECT_FALSE(counters->heartbeat_ok.load());
  const auto failures = counters->registry_failures.load();

  world->down = false;
  wait(config.repair_interval);  // a repair is owed: the next beat comes this soon
  EXPECT_EQ(world->owner_of(imei_1), "A");
  EXPECT_EQ(world->owner_of(imei_2), "A");
  EXPECT_TRUE(counters->heartbeat_ok.load());
  EXPECT_EQ(counters->registry_failures.load(), failures);
  EXPECT_EQ(counters->registry_held.load(), 2);
}

TEST_F(RegistryLogic, ALapsedHeartbeatPutsBackWhatTheJanitorEvictedButNotALiveInstancesDevice) {
  const registry_actor a = start_registry("A");
  tell(a, true, imei_1);
  tell(a, true, imei_2);
  // A's heartbeat lapses (a long pause); meanwhile device 1 reconnects to B, and B's
  // janitor evicts what A still held.
  world->heartbeats.erase("A");
  ports::store_failure error;
  auto b = store("B");
  ASSERT_TRUE(b->heartbeat(90s, error));
  ASSERT_TRUE(b->register_device(imei_1, error));
  ASSERT_TRUE(b->janitor_pass(ports::janitor_mode::reverse_index, 1000, error));
  EXPECT_EQ(world->owner_of(imei_2), "(nil)");

  wait(config.heartbeat_interval);  // A's next beat finds its heartbeat missing
  EXPECT_EQ(world->owner_of(imei_2), "A");
  EXPECT_EQ(world->owner_of(imei_1), "B") << "B is alive and holds the device now";
  EXPECT_TRUE(world->heartbeats.contains("A"));
}

// A second process started with A's instance id took the heartbeat over (A was paused
// past its TTL): A leaves it to that process and says it is not ready, and writes it
// again once that process is gone.
TEST_F(RegistryLogic, AHeartbeatTakenOverIsLeftToItsHolderAndClearsTheHeartbeat) {
  const registry_actor a = start_registry("A");
  ASSERT_TRUE(counters->heartbeat_ok.load());
  world->heartbeat_holders["A"] = "host=elsewhere pid=7 every_ms=30000";
  wait(config.heartbeat_interval);
  EXPECT_TRUE(counters->heartbeat_taken.load());
  EXPECT_FALSE(counters->heartbeat_ok.load());
  EXPECT_EQ(world->heartbeat_holders["A"], "host=elsewhere pid=7 every_ms=30000");
  wait(config.heartbeat_interval);
  EXPECT_EQ(world->heartbeat_holders["A"], "host=elsewhere pid=7 every_ms=30000");

  world->heartbeats.erase("A");  // the other process stopped
  world->heartbeat_holders.erase("A");
  wait(config.heartbeat_interval);
  EXPECT_FALSE(counters->heartbeat_taken.load());
  EXPECT_TRUE(counters->heartbeat_ok.load());
  EXPECT_EQ(world->heartbeat_holders["A"], "A@fake");
}

TEST_F(RegistryLogic, ADeviceWhoseEntryAStaleSessionDeletedIsPutBackAtTheNextBeat) {
  const registry_actor a = start_registry("A");
  tell(a, true, imei_1);
  // B still had a session of the device: it registers it (A's index loses it), then
  // the stale session closes and deletes the entry. The device is connected to A.
  ports::store_failure error;
  auto b = store("B");
  ASSERT_TRUE(b->heartbeat(90s, error));
  ASSERT_TRUE(b->register_device(imei_1, error));
  ASSERT_TRUE(b->unregister_device(imei_1, error));
  EXPECT_EQ(world->owner_of(imei_1), "(nil)");

  wait(config.heartbeat_interval);
  EXPECT_EQ(world->owner_of(imei_1), "A");
  EXPECT_TRUE(world->devices["A"].contains(imei_1));
}

TEST_F(RegistryLogic, AnotherSessionOfTheSameDeviceKeepsItsEntryWhenTheOldOneLeaves) {
  const registry_actor a = start_registry("A");
  tell(a, true, imei_1);
  tell(a, true, imei_1);  // the device reconnected before its old connection closed
  tell(a, false, imei_1);
  EXPECT_EQ(world->owner_of(imei_1), "A");
  tell(a, false, imei_1);
  EXPECT_EQ(world->owner_of(imei_1), "(nil)");
  EXPECT_EQ(counters->registry_held.load(), 0);
}

TEST_F(RegistryLogic, AnUnregisterThatFailsIsCountedAndTheDeviceIsNoLongerHeld) {
  const registry_actor a = start_registry("A");
  tell(a, true, imei_1);
  world->down = true;
  tell(a, false, imei_1);
  EXPECT_EQ(counters->registry_failures.load(), 1U);
  EXPECT_EQ(counters->registry_held.load(), 0);
  EXPECT_EQ(world->owner_of(imei_1), "A") << "the store was down: nothing changed there";
}

TEST_F(RegistryLogic, TheJanitorEvictsOnlyWhatADeadInstanceStillHolds) {
  ports::store_failure error;
  auto b = store("B");
  ASSERT_TRUE(b->heartbeat(90s, error));
  ASSERT_TRUE(b->register_device(imei_1, error));
  ASSERT_TRUE(b->register_device(imei_2, error));
  const registry_actor a = start_registry("A");
  tell(a, true, imei_2);  // device 2 moved to A
  start_janitor("A");
  world->heartbeats.erase("B");  // B died

  wait(janitor_config{}.interval);
  EXPECT_EQ(world->owner_of(imei_1), "(nil)");
  EXPECT_EQ(world->owner_of(imei_2), "A");
  EXPECT_EQ(counters->janitor_evicted.load(), 1U);
  EXPECT_FALSE(world->known.contains("B"));
}

TEST_F(RegistryLogic, AJanitorPassThatFailsIsCountedAndTriedAgainNextInterval) {
  start_janitor("A");
  world->down = true;
  wait(janitor_config{}.interval);
  EXPECT_EQ(counters->janitor_passes.load(), 1U);
  EXPECT_EQ(counters->janitor_evicted.load(), 0U);
  world->down = false;
  world->known.insert("C");  // an instance that died without a heartbeat left
  wait(janitor_config{}.interval);
  EXPECT_EQ(counters->janitor_passes.load(), 2U);
  EXPECT_FALSE(world->known.contains("C"));
}

}  // namespace
}  // namespace tgw::actors::registry
