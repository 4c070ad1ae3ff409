#include "infra/redis/embedded_redis.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "infra/redis/connection.hpp"

namespace tgw::infra::redis {
namespace {

std::string find_redis_server() {
  // Read once at start-up, before the gateway starts any thread.
  // NOLINTNEXTLINE(concurrency-mt-unsafe)
  if (const char* env = std::getenv("TGW_REDIS_SERVER"); env != nullptr && *env != '\0') {
    if (::access(env, X_OK) != 0)
      throw std::runtime_error(std::string("TGW_REDIS_SERVER names ") + env +
                               ", which is not an executable file");
    return env;
  }
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/usr/sbin"}) {
    std::string candidate = std::string(dir) + "/redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw std::runtime_error(
      "redis-server not found (looked in /usr/bin, /usr/local/bin, /usr/sbin and "
      "$TGW_REDIS_SERVER); install it (apt-get install redis-server) or pass --redis URL");
}

}  // namespace

embedded_redis::embedded_redis(const std::string& data_dir) {
  std::filesystem::create_directories(data_dir);
  const std::string dir = std::filesystem::absolute(data_dir).string();
  const std::string binary = find_redis_server();
  where_.unix_socket = dir + "/redis.sock";
  std::vector<std::string> args = {binary,
                                   "--port",
                                   "0",
                                   "--unixsocket",
                                   where_.unix_socket,
                                   "--unixsocketperm",
                                   "700",
                                   "--dir",
                                   dir,
                                   "--appendonly",
                                   "yes",
                                   "--appendfsync",
                                   "everysec",
                                   "--save",
                                   "",
                                   "--daemonize",
                                   "no",
                                   "--logfile",
                                   dir + "/redis.log"};
  // Built before fork: the child only calls async-signal-safe functions.
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork redis-server");
  if (pid == 0) {
    // The gateway blocks SIGTERM in all its threads; the server must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    // Nor the gateway's CPU policy: the server's one thread is on every packet's path,
    // and a woken Redis should take the core from whatever runs.
    const sched_param priority{};
    ::sched_setscheduler(0, SCHED_OTHER, &priority);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
    }
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  for (int i = 0; i < 400; ++i) {
    if (!running()) break;
    connection c({where_, std::chrono::milliseconds{200}, std::chrono::milliseconds{500}, ""});
    if (c.command({"PING"}).text == "PONG") return;
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
  }
  const bool alive = running();
  if (alive) ::kill(pid_, SIGKILL);
  throw std::runtime_error("embedded redis-server did not come up; see " + dir + "/redis.log");
}

bool embedded_redis::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

embedded_redis::~embedded_redis() {
  if (!running()) return;
  // SIGTERM makes redis-server flush its append-only file and exit.
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 200 && running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
  if (running()) ::kill(pid_, SIGKILL);
  int status = 0;
  if (pid_ > 0) ::waitpid(pid_, &status, 0);
}

}  // namespace tgw::infra::redis
