// The main of every test binary: each process gets a temporary directory of its own.
//
// ctest runs the tests of one binary as parallel processes (`-j`), and tests name their
// files after ::testing::TempDir() ("gateway.log", "replay_stderr.txt", ...). With one
// shared /tmp two processes overwrite each other's files and a test reads its neighbour's
// output. GoogleTest takes TempDir() from TEST_TMPDIR on every call, so setting it once
// here gives every process a private directory without touching the tests.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

/// Makes /tmp/tgw-XXXXXX (under TMPDIR when set) readable by other users: tests that
/// run as root start servers (PostgreSQL) as another user, which must reach their files.
std::string make_private_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && base[0] != '\0' ? base : "/tmp") + "/tgw-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  ::chmod(pattern.c_str(), 0755);
  return pattern;
}

}  // namespace

int main(int argc, char** argv) {
  // A caller that chose a directory (TEST_TMPDIR set) keeps it.
  const char* chosen = std::getenv("TEST_TMPDIR");
  std::string own;
  if (chosen == nullptr || chosen[0] == '\0') {
    own = make_private_temp_dir();
    if (!own.empty()) ::setenv("TEST_TMPDIR", own.c_str(), 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  // A failure keeps its files (logs of the gateway under test) for a look afterwards.
  if (!own.empty() && result == 0) {
    std::error_code ignored;
    std::filesystem::remove_all(own, ignored);
  }
  return result;
}
