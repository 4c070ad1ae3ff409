#include "codecs/errc.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/codecs/printers.hpp"

namespace tgw::codecs {
namespace {

TEST(Errc, EveryCodeHasItsOwnName) {
  std::set<std::string_view> names;
  const auto last = static_cast<int>(errc::value_out_of_range);
  for (int i = 0; i <= last; ++i) {
    const std::string_view name = to_string(static_cast<errc>(i));
    EXPECT_NE(name, "unknown") << i;
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(last) + 1);
  EXPECT_EQ(to_string(static_cast<errc>(last + 1)), "unknown");
}

TEST(Errc, NamesAreTheEnumerators) {
  EXPECT_EQ(to_string(errc::ok), "ok");
  EXPECT_EQ(to_string(errc::need_more), "need_more");
  EXPECT_EQ(to_string(errc::bad_crc), "bad_crc");
  EXPECT_EQ(to_string(errc::record_count_mismatch), "record_count_mismatch");
  EXPECT_EQ(to_string(errc::value_out_of_range), "value_out_of_range");
}

TEST(DecodeStatus, OkOnlyForOk) {
  EXPECT_TRUE(decode_status{}.ok());
  EXPECT_TRUE((decode_status{errc::ok, 12}.ok()));
  EXPECT_FALSE((decode_status{errc::need_more, 0}.ok()));
  EXPECT_FALSE((decode_status{errc::truncated, 3}.ok()));
}

}  // namespace
}  // namespace tgw::codecs
