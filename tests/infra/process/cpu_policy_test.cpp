// The CPU policy: parsed from its flag, applied to the calling thread and inherited by
// the threads it starts afterwards. Each test runs in a thread of its own, so the test
// runner's threads keep their policy.
#include "infra/process/cpu_policy.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <cerrno>
#include <optional>
#include <thread>
#include <vector>

namespace {

using tgw::infra::process::apply_cpu_policy;
using tgw::infra::process::cpu_policy;
using tgw::infra::process::current_cpu_policy;
using tgw::infra::process::parse_cpu_policy;

// The policy of a thread started by one that has `policy`.
std::optional<cpu_policy> policy_of_a_child_of(cpu_policy policy, std::string& error) {
  std::optional<cpu_policy> seen;
  std::thread parent([&] {
    error = apply_cpu_policy(policy);
    std::thread child([&] { seen = current_cpu_policy(); });
    child.join();
  });
  parent.join();
  return seen;
}

TEST(CpuPolicy, ParsesItsThreeNamesAndNothingElse) {
  EXPECT_EQ(parse_cpu_policy("batch"), cpu_policy::batch);
  EXPECT_EQ(parse_cpu_policy("normal"), cpu_policy::normal);
  EXPECT_EQ(parse_cpu_policy("keep"), cpu_policy::keep);
  EXPECT_EQ(parse_cpu_policy("Batch"), std::nullopt);
  EXPECT_EQ(parse_cpu_policy("idle"), std::nullopt);
  EXPECT_EQ(parse_cpu_policy(""), std::nullopt);
  EXPECT_EQ(tgw::infra::process::to_string(cpu_policy::batch), "batch");
  EXPECT_EQ(tgw::infra::process::to_string(cpu_policy::normal), "normal");
  EXPECT_EQ(tgw::infra::process::to_string(cpu_policy::keep), "keep");
  EXPECT_EQ(tgw::infra::process::cpu_policy_names(),
            (std::vector<std::string>{"batch", "normal", "keep"}));
}

TEST(CpuPolicy, EachTakesHoldAndKeepChangesNothing) {
  // Each step: the policy applied, then the thread's policy right after it.
  const cpu_policy steps[] = {cpu_policy::batch, cpu_policy::keep, cpu_policy::normal,
                              cpu_policy::keep};
  std::vector<std::optional<cpu_policy>> seen;
  std::thread t([&] {
    for (const cpu_policy p : steps) {
      EXPECT_EQ(apply_cpu_policy(p), "");
      seen.push_back(current_cpu_policy());
    }
  });
  t.join();
  EXPECT_EQ(seen, (std::vector<std::optional<cpu_policy>>{cpu_policy::batch, cpu_policy::batch,
                                                          cpu_policy::normal, cpu_policy::normal}));
}

TEST(CpuPolicy, ThreadsStartedAfterwardsInheritIt) {
  std::string error;
  EXPECT_EQ(policy_of_a_child_of(cpu_policy::batch, error), cpu_policy::batch);
  EXPECT_EQ(error, "");
  EXPECT_EQ(policy_of_a_child_of(cpu_policy::normal, error), cpu_policy::normal);
  EXPECT_EQ(error, "");
}

TEST(CpuPolicy, ARealTimeThreadIsNeitherAndCanStillBeGivenBatch) {
  bool permitted = true;
  std::optional<cpu_policy> real_time = cpu_policy::normal, after;
  std::string error;
  std::thread t([&] {
    const sched_param lowest{sched_get_priority_min(SCHED_FIFO)};
    if (::sched_setscheduler(0, SCHED_FIFO, &lowest) != 0) {
      permitted = errno != EPERM;
      return;
    }
    real_time = current_cpu_policy();
    error = apply_cpu_policy(cpu_policy::batch);
    after = current_cpu_policy();
  });
  t.join();
  if (!permitted) GTEST_SKIP() << "no permission to make a thread real-time here";
  EXPECT_EQ(real_time, std::nullopt);
  EXPECT_EQ(error, "");
  EXPECT_EQ(after, cpu_policy::batch);
}

}  // namespace
