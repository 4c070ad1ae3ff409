#include "infra/metrics/command_outcomes.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::metrics {
namespace {

std::string_view outcome(std::string_view status, std::string_view reason) {
  return command_outcome_names[command_outcome_index(status, reason)];
}

TEST(CommandOutcomes, AStatusForASuccessAReasonForAFailure) {
  EXPECT_EQ(outcome("responded", ""), "responded");
  EXPECT_EQ(outcome("delivered", ""), "delivered");
  for (const char* reason : {"timeout", "socket_closed", "imei_mismatch", "codec_mismatch",
                             "write_queue_full", "expired_before_delivery"})
    EXPECT_EQ(outcome("failed", reason), reason);
  EXPECT_EQ(outcome("failed", "malformed: bad codec 13"), "malformed");
  EXPECT_EQ(outcome("failed", "instance_lost"), "other");
  EXPECT_EQ(outcome("weird", ""), "other");
}

}  // namespace
}  // namespace tgw::infra::metrics
