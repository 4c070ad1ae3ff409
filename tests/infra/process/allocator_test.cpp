// The allocator probe. This test binary is not linked with jemalloc, so it must report
// the system malloc; the gateway test checks the jemalloc side on the tgw executable.
#include "infra/process/allocator.hpp"

#include <gtest/gtest.h>

TEST(Allocator, ABinaryWithoutJemallocReportsTheSystemMalloc) {
  EXPECT_EQ(tgw::infra::process::allocator_in_use(), "system malloc");
}
