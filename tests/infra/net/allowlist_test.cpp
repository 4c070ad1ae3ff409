// The allowlist file and the list sessions consult: comments and blanks are skipped, a
// line that is not an IMEI and a file with no IMEI are errors naming the file, and a
// replaced list takes effect for the next handshake.
#include "actors/domain/allowlist.hpp"
#include "infra/net/allowlist_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace {

using tgw::domain::allowlist;
using tgw::infra::net::load_allowlist;

std::string write_list(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/allowlist-" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Allowlist, ReadsImeisAndSkipsCommentsBlanksAndLineEnds) {
  std::string error;
  const auto imeis = load_allowlist(
      write_list("ok", "# fleet A\n356307042441013\r\n\n  356307042441021  \n\t# b\n"), error);
  ASSERT_TRUE(imeis) << error;
  EXPECT_EQ(imeis->size(), 2U);
  EXPECT_TRUE(imeis->contains("356307042441013"));
  EXPECT_TRUE(imeis->contains("356307042441021"));
}

TEST(Allowlist, AFileWithNoImeiIsAnError) {
  std::string error;
  const std::string path = write_list("empty", "# nothing yet\n\n");
  EXPECT_FALSE(load_allowlist(path, error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("lists no IMEI"), std::string::npos) << error;
}

TEST(Allowlist, ALineThatIsNotAnImeiIsAnErrorWithItsNumber) {
  std::string error;
  EXPECT_FALSE(load_allowlist(write_list("bad", "356307042441013\n3563070424\n"), error));
  EXPECT_NE(error.find("line 2: '3563070424' is not an IMEI"), std::string::npos) << error;
}

TEST(Allowlist, AMissingFileIsAnError) {
  std::string error;
  EXPECT_FALSE(load_allowlist(::testing::TempDir() + "/no-such-allowlist", error));
  EXPECT_NE(error.find("cannot read allowlist"), std::string::npos) << error;
}

TEST(Allowlist, NoListAdmitsEveryoneAndAReplacedListTakesEffect) {
  allowlist open;
  EXPECT_TRUE(open.admits("356307042441013"));
  EXPECT_EQ(open.size(), 0U);
  allowlist list({"356307042441013"});
  EXPECT_TRUE(list.admits("356307042441013"));
  EXPECT_FALSE(list.admits("356307042441021"));
  list.replace({"356307042441021"});
  EXPECT_FALSE(list.admits("356307042441013"));
  EXPECT_TRUE(list.admits("356307042441021"));
  EXPECT_EQ(list.size(), 1U);
}

}  // namespace
