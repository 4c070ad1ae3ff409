// The tokens file and the checks on a bearer token: only hashes are kept, a token is
// found by its hash among all entries, and a file that does not read names the line.
#include "infra/api/tokens.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace tgw::infra::api {
namespace {

TEST(Tokens, ANewTokenIsRandomAndOnlyItsHashIsKept) {
  const std::string a = new_token();
  const std::string b = new_token();
  ASSERT_EQ(a.size(), 68U);
  EXPECT_TRUE(a.starts_with("tgw_"));
  EXPECT_NE(a, b);
  token_table t;
  ASSERT_TRUE(t.add({"ops", static_cast<scope_set>(scope::read), sha256_hex(a), 1}));
  EXPECT_EQ(t.text().find(a), std::string::npos);
  EXPECT_NE(t.text().find(sha256_hex(a)), std::string::npos);
}

TEST(Tokens, FindsTheEntryWhoseHashMatchesAndNoOther) {
  const std::string a = new_token(), b = new_token();
  token_table t;
  t.add({"alice", static_cast<scope_set>(scope::read), sha256_hex(a), 1});
  t.add({"bob", static_cast<scope_set>(scope::command), sha256_hex(b), 2});
  ASSERT_NE(t.find(a), nullptr);
  EXPECT_EQ(t.find(a)->name, "alice");
  EXPECT_EQ(t.find(b)->name, "bob");
  EXPECT_EQ(t.find(a.substr(0, 67)), nullptr);
  EXPECT_EQ(t.find(""), nullptr);
  EXPECT_EQ(t.find(sha256_hex(a)), nullptr) << "the hash itself is no token";
}

TEST(Tokens, SHA256IsTheStandardOne) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Tokens, ScopesReadAndPrint) {
  std::string error;
  EXPECT_EQ(parse_scopes("read,command,events", error), 7);
  EXPECT_EQ(scopes_text(5), "read,events");
  EXPECT_FALSE(parse_scopes("read,write", error));
  EXPECT_EQ(error, "unknown scope 'write' (scopes: read, command, events)");
  EXPECT_FALSE(parse_scopes("", error));
}

TEST(Tokens, NamesAreShortAndPlain) {
  EXPECT_EQ(token_name_problem("backoffice@prod-1"), "");
  EXPECT_NE(token_name_problem(""), "");
  EXPECT_NE(token_name_problem("a b"), "");
  EXPECT_NE(token_name_problem(std::string(65, 'a')), "");
}

TEST(Tokens, TheFileReadsBackAndABadLineIsNamed) {
  token_table t;
  t.add({"a", 3, sha256_hex("x"), 1700000000000});
  std::string error;
  const auto back = token_table::parse(t.text(), error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->entries().size(), 1U);
  EXPECT_EQ(back->entries()[0].scopes, 3);
  EXPECT_EQ(back->entries()[0].created_ms, 1700000000000);
  EXPECT_FALSE(token_table::parse("# c\na read abc 1\n", error));
  EXPECT_EQ(error, "line 2: the hash is not 64 lowercase hex digits (a SHA-256)");
  EXPECT_FALSE(token_table::parse(
      "a read " + sha256_hex("x") + " 1\na read " + sha256_hex("y") + " 2\n", error));
  EXPECT_EQ(error, "line 2: the name 'a' is taken by an earlier line");
  EXPECT_FALSE(token_table::parse("a read\n", error));
  EXPECT_EQ(error, "line 1: expected NAME SCOPES SHA256 CREATED_MS, found 2 words");
}

TEST(Tokens, TheFileIsWrittenForItsOwnerOnly) {
  const std::string path = ::testing::TempDir() + "/tokens-mode";
  token_table t;
  t.add({"a", 1, sha256_hex("x"), 1});
  std::string error;
  ASSERT_TRUE(write_token_file(path, t, error)) << error;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  const auto back = read_token_file(path, false, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->entries().size(), 1U);
  EXPECT_FALSE(read_token_file(path + ".missing", false, error));
  EXPECT_TRUE(read_token_file(path + ".missing", true, error));
}

}  // namespace
}  // namespace tgw::infra::api
