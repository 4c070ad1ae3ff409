#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tgw::test {

struct run_result {
  int exit_code = -1;
  std::string out;  ///< stdout and stderr together
};

/// Runs a shell command line and collects its output and exit code.
inline run_result run_command(const std::string& shell_command) {
  const std::string command = shell_command + " 2>&1";
  run_result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// Runs the real `tgw` binary (TGW_BINARY, defined by the test target) with `args`,
/// so flag parsing and exit codes are covered too.
inline run_result run_tgw(const std::string& args) {
  // Appended in place: GCC 12 at -O3 takes `string + " " + args` for an overflow
  // (-Warray-bounds) when the binary's path is a literal of more than 15 characters.
  std::string command(TGW_BINARY);
  command.append(" ").append(args);
  return run_command(command);
}

}  // namespace tgw::test
