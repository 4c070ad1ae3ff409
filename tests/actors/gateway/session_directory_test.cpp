// The session directory: which session holds which IMEI. Its map is keyed by the IMEI
// as a number, so what goes in as text must come out as the same text, and what is
// not an IMEI finds no session and attaches none.
#include "actors/gateway/session_directory.hpp"

#include <gtest/gtest.h>
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <algorithm>

#include "tests/actors/gateway/session_fakes.hpp"

namespace tgw::actors::gateway {
namespace {

// Takes the session interface and does nothing: the directory only holds handles.
session_actor::behavior_type idle_session() {
  return {
      [](frame_atom, std::uint8_t, std::uint8_t, const std::vector<std::uint8_t>&) {},
      [](persisted_atom, const ports::write_outcome&) {},
      [](revoke_atom) {},
      [](commands::command_atom, const ports::command_entry&) {},
      [](closed_atom, const std::string&) {},
  };
}

class SessionDirectory : public ::testing::Test {
 protected:
  ~SessionDirectory() override {
    for (const auto& a : {first, second}) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
  }
  test::test_config cfg;
  caf::actor_system sys{cfg};
  caf::scheduler::test_coordinator& sched =
      dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  session_actor first = sys.spawn(idle_session);
  session_actor second = sys.spawn(idle_session);
  session_directory directory;
};

TEST_F(SessionDirectory, FindsWhatWasAttachedAndGivesItsTextBack) {
  directory.attach("356307042441013", first);
  directory.attach("0356307042441013", second);  // 16 digits: another device
  EXPECT_EQ(directory.find("356307042441013"), first);
  EXPECT_EQ(directory.find("0356307042441013"), second);
  EXPECT_FALSE(directory.find("035630704244101"));
  // The command reader's view: the same actor, as the one message it sends.
  const commands::session_lookup& lookup = directory;
  EXPECT_EQ(lookup.command_target("356307042441013"), commands::command_target_actor{first});
  EXPECT_FALSE(lookup.command_target("035630704244101"));
  auto held = directory.snapshot();
  std::sort(held.begin(), held.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  ASSERT_EQ(held.size(), 2U);
  EXPECT_EQ(held[0].first, "0356307042441013");
  EXPECT_EQ(held[1].first, "356307042441013");
}

TEST_F(SessionDirectory, ANewerConnectionKeepsTheDeviceWhenTheOlderDetaches) {
  directory.attach("356307042441013", first);
  directory.attach("356307042441013", second);
  directory.detach("356307042441013", first);
  EXPECT_EQ(directory.find("356307042441013"), second);
  directory.detach("356307042441013", second);
  EXPECT_FALSE(directory.find("356307042441013"));
}

TEST_F(SessionDirectory, WhatIsNotAnImeiFindsNothingAndAttachesNothing) {
  directory.attach("dev-1", first);
  EXPECT_EQ(directory.size(), 0U);
  EXPECT_FALSE(directory.find("dev-1"));
  EXPECT_FALSE(directory.find(""));
  directory.detach("dev-1", first);  // harmless
  EXPECT_EQ(directory.size(), 0U);
}

}  // namespace
}  // namespace tgw::actors::gateway
