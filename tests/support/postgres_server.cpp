#include "tests/support/postgres_server.hpp"

#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/support/redis_server.hpp"

namespace tgw::test {
namespace {

// The user the server runs as: postgres when we are root (postgres refuses to run as
// root), ourselves otherwise.
const passwd* server_user() {
  if (::geteuid() != 0) return nullptr;
  const passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) throw std::runtime_error("running as root and there is no postgres user");
  return pw;
}

int spawn_as(const std::vector<std::string>& argv, const std::string& log_path) {
  const passwd* user = server_user();
  if (user == nullptr) return spawn_process(argv, log_path);
  return spawn_process(argv, log_path, run_as{user->pw_uid, user->pw_gid});
}

int wait_exit(int pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed");
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("`" + command + "` failed: " + out);
  return out;
}

}  // namespace

std::string postgres_server::bin_dir() {
  const std::string dir = "/usr/lib/postgresql/15/bin";
  return std::filesystem::exists(dir + "/postgres") ? dir : std::string();
}

postgres_server::postgres_server() {
  const std::string bin = bin_dir();
  if (bin.empty()) throw std::runtime_error("PostgreSQL 15 is not installed (scripts/setup)");
  char tmpl[] = "/tmp/tgw-pg-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  if (const passwd* user = server_user())
    if (::chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0)
      throw std::runtime_error("cannot hand " + dir_ + " to postgres");
  port_ = free_port();
  const int init = spawn_as({bin + "/initdb", "-D", dir_ + "/data", "-U", "tgw", "--auth=trust",
                             "--no-sync", "-E", "UTF8", "--locale=C"},
                            dir_ + "/initdb.log");
  if (wait_exit(init) != 0) throw std::runtime_error("initdb failed; see " + dir_ + "/initdb.log");
  start();
  (void)query("CREATE DATABASE tgw");
}

postgres_server::~postgres_server() {
  if (pid_ > 0) {
    ::kill(pid_, SIGQUIT);
    (void)wait_exit(pid_);
    pid_ = -1;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void postgres_server::start() {
  if (pid_ > 0) return;
  // fsync off: the tests ride out a server crash, not a machine crash, and a crash loses
  // nothing from the page cache. Commits stay synchronous: an asynchronous commit is lost
  // by a crash (stop()), and the tests count on what the sink saw committed.
  pid_ = spawn_as({bin_dir() + "/postgres", "-D", dir_ + "/data", "-p", std::to_string(port_), "-k",
                   dir_, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c",
                   "full_page_writes=off", "-c", "max_connections=40", "-c", "shared_buffers=64MB"},
                  dir_ + "/postgres.log");
  for (int i = 0; i < 400; ++i) {
    if (::system(
            ("/usr/lib/postgresql/15/bin/pg_isready -q -h 127.0.0.1 -p " + std::to_string(port_))
                .c_str()) == 0)
      return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
  }
  throw std::runtime_error("postgres did not start on port " + std::to_string(port_) + "; see " +
                           dir_ + "/postgres.log");
}

void postgres_server::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGQUIT);
  (void)wait_exit(pid_);
  pid_ = -1;
}

std::string postgres_server::dsn() const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=tgw dbname=tgw";
}

std::string postgres_server::query(const std::string& sql) const {
  std::string quoted = "'";
  for (const char c : sql) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  const bool has_tgw = sql != "CREATE DATABASE tgw";
  std::string out =
      capture("psql -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p " + std::to_string(port_) +
              " -U tgw -d " + (has_tgw ? "tgw" : "postgres") + " -c " + quoted);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace tgw::test
