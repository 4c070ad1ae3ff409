// The registry actor on CAF's deterministic scheduler against a real redis-server:
// what it writes for the devices it is told about. Sessions register only IMEIs they
// validated, so anything else reaching it is a bug elsewhere: it must write nothing,
// count nothing and go on serving the devices that are real.
#include "actors/registry/registry_actor.hpp"
#include "infra/registry/redis_registry_store.hpp"
#include "infra/registry/registry_keys.hpp"

#include <gtest/gtest.h>
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "tests/support/redis_backend.hpp"

namespace tgw::actors::registry {
namespace {

using namespace std::chrono_literals;
namespace keys = infra::registry::keys;

struct test_config : caf::actor_system_config {
  test_config() { set("scheduler.policy", caf::atom("testing")); }
};

class RegistryActor : public ::testing::Test {
 protected:
  RegistryActor() {
    auto store = std::make_shared<infra::registry::redis_registry_store>(
        infra::redis::connection::options{backend.endpoint(), 1000ms, 5000ms, "test"}, "A",
        backend.shards());
    actor = sys.spawn(registry, registry_config{}, store, counters);
    sched.run_once();  // the first heartbeat
  }
  ~RegistryActor() override {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    sched.run();
  }
  std::string owner(const std::string& imei) {
    const auto v =
        redis.command({"HGET", keys::registry_in(backend.shards().prefix_of(imei)), imei});
    return v.is_nil() ? "(nil)" : v.text;
  }
  std::int64_t registry_size() {
    std::int64_t n = 0;
    for (const auto& key : backend.in_every_shard(keys::registry))
      n += redis.command({"HLEN", key}).integer;
    return n;
  }

  test::redis_backend backend;
  infra::redis::connection redis = backend.connect();
  std::shared_ptr<infra::metrics::gateway_counters> counters =
      std::make_shared<infra::metrics::gateway_counters>();
  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scheduler::test_coordinator& sched =
      dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  registry_actor actor;
};

TEST_F(RegistryActor, RegistersAndUnregistersADevice) {
  caf::anon_send(actor, register_atom::value, std::string("356307042441013"));
  sched.run();
  EXPECT_EQ(owner("356307042441013"), "A");
  EXPECT_EQ(counters->registry_held.load(), 1);
  caf::anon_send(actor, unregister_atom::value, std::string("356307042441013"));
  sched.run();
  EXPECT_EQ(owner("356307042441013"), "(nil)");
  EXPECT_EQ(counters->registry_held.load(), 0);
}

TEST_F(RegistryActor, WritesNothingForWhatIsNotAnImeiAndGoesOn) {
  for (const char* bad : {"dev-1", "", "35630704244101x", "12345678901234567"}) {
    caf::anon_send(actor, register_atom::value, std::string(bad));
    caf::anon_send(actor, unregister_atom::value, std::string(bad));
  }
  sched.run();
  EXPECT_EQ(registry_size(), 0);
  EXPECT_EQ(counters->registry_held.load(), 0);
  EXPECT_EQ(counters->registry_failures.load(), 0U);
  caf::anon_send(actor, register_atom::value, std::string("356307042441013"));
  caf::anon_send(actor, unregister_atom::value, std::string("dev-1"));
  sched.run();
  EXPECT_EQ(owner("356307042441013"), "A");
  EXPECT_EQ(counters->registry_held.load(), 1);
}

}  // namespace
}  // namespace tgw::actors::registry
