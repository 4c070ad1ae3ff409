#include "infra/redis/embedded_redis.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

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

// Takes the data directory's lock, or throws naming whoever holds it. The pid in the
// file is the gateway that took it; the server it started inherits the lock and may
// hold it a moment longer while it flushes its append-only file.
int lock_data_dir(const std::string& dir) {
  const std::string path = dir + "/tgw.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot use data dir " + dir + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error != EWOULDBLOCK)
      throw std::runtime_error("cannot lock " + path + ": " + std::strerror(error));
    std::string holder;
    std::ifstream(path) >> holder;
    throw std::runtime_error("data dir " + dir + " is in use by another tgw serve" +
                             (holder.empty() ? std::string() : " (pid " + holder + ")") +
                             "; stop it or pass another --data-dir");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::write(fd, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(error));
  }
  return fd;
}

}  // namespace

embedded_redis::embedded_redis(const std::string& data_dir) {
  std::error_code made;
  std::filesystem::create_directories(data_dir, made);
  if (made) throw std::runtime_error("cannot create data dir " + data_dir + ": " + made.message());
  const std::string dir = std::filesystem::absolute(data_dir).string();
  dir_ = dir;
  lock_fd_ = lock_data_dir(dir);
  try {
    start(dir);
  } catch (...) {
    ::close(lock_fd_);
    throw;
  }
}

void embedded_redis::start(const std::string& dir) {
  const std::string binary = find_redis_server();
  where_.unix_socket = dir + "/redis.sock";
  // sockaddr_un holds 107 bytes of path: a longer one makes redis-server fail after
  // it started, with the reason only in its own log.
  constexpr std::size_t max_socket_path = sizeof(sockaddr_un::sun_path) - 1;
  if (where_.unix_socket.size() > max_socket_path)
    throw std::runtime_error("data dir " + dir + " is too long for the private Redis's socket (" +
                             std::to_string(where_.unix_socket.size()) +
                             " bytes with /redis.sock, " + "at most " +
                             std::to_string(max_socket_path) + "): choose a shorter --data-dir");
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
  const pid_t parent = ::getpid();
  const int lock = lock_fd_;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork redis-server");
  if (pid == 0) {
    // Its own process group: Ctrl-C or `timeout` signal the gateway's whole group, and
    // the server must outlive the gateway's drain, which still writes to it.
    ::setpgid(0, 0);
    // Dies with the gateway, even a SIGKILLed one. If the gateway died before this
    // line, the parent is already someone else: leave at once.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    // Holds the data dir's lock until it has flushed and exited, so a gateway started
    // right after a crash cannot start a second server on the same files.
    ::fcntl(lock, F_SETFD, 0);
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
  {
    const std::lock_guard guard(mutex_);
    pid_ = pid;
  }
  for (int i = 0; i < 400; ++i) {
    if (!running()) break;
    connection c({where_, std::chrono::milliseconds{200}, std::chrono::milliseconds{500}, ""});
    if (c.command({"PING"}).text == "PONG") return;
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
  }
  const std::lock_guard guard(mutex_);
  if (running_locked()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &last_status_, 0);
    pid_ = -1;
  }
  throw std::runtime_error("embedded redis-server did not come up; see " + dir + "/redis.log");
}

bool embedded_redis::running_locked() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    last_status_ = status;
    pid_ = -1;
    return false;
  }
  return true;
}

int embedded_redis::pid() const {
  const std::lock_guard lock(mutex_);
  return pid_;
}

bool embedded_redis::running() {
  const std::lock_guard lock(mutex_);
  return running_locked();
}

namespace {

std::string exit_status_text(int status) {
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

}  // namespace

void embedded_redis::supervise(supervision settings) {
  supervisor_ = std::thread([this, settings = std::move(settings)]() mutable {
    ::pthread_setname_np(::pthread_self(), "tgw.redis");
    watch(std::move(settings));
  });
}

void embedded_redis::watch(supervision settings) {
  using namespace std::chrono_literals;
  using clock = std::chrono::steady_clock;
  int failed_starts = 0;  // in a row
  auto backoff = settings.first_backoff;
  auto up_since = clock::now();
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, 100ms, [this] { return stopping_; });
    if (stopping_) return;
    if (running_locked()) continue;
    // A server that ran for the window is restarted after the first backoff; one that
    // died sooner (a crash loop) after a backoff that doubles each time.
    const auto ran = clock::now() - up_since;
    if (ran >= settings.stable_after) backoff = settings.first_backoff;
    spdlog::error(
        "private redis-server exited ({}) after {} s up; devices are not ACKed until it is "
        "back; restarting it on {} in {} ms (its log: {}/redis.log)",
        exit_status_text(last_status_),
        std::chrono::duration_cast<std::chrono::seconds>(ran).count(), dir_, backoff.count(), dir_);
    // Only a start that fails (the server does not come up) counts toward giving up:
    // a server that came up and was killed again is restarted however often it happens.
    for (;;) {
      if (wake_.wait_for(lock, backoff, [this] { return stopping_; })) return;
      backoff = std::min(backoff * 2, settings.max_backoff);
      lock.unlock();
      std::string failure;
      try {
        start(dir_);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      lock.lock();
      if (failure.empty()) {
        failed_starts = 0;
        up_since = clock::now();
        spdlog::warn(
            "private redis-server restarted (pid {}) on {}; the writers reconnect and ACKs "
            "resume",
            pid_, dir_);
        break;
      }
      ++failed_starts;
      if (failed_starts >= settings.max_restarts) {
        spdlog::error(
            "private redis-server: {} restart(s) in a row failed (the last: {}); giving up: "
            "the gateway exits 1 so that its supervisor restarts it (see {}/redis.log)",
            failed_starts, failure, dir_);
        lock.unlock();
        if (settings.give_up) settings.give_up();
        return;
      }
      spdlog::error(
          "private redis-server did not restart ({}): attempt {} of {}; trying again in {} ms",
          failure, failed_starts, settings.max_restarts, backoff.count());
    }
  }
}

embedded_redis::~embedded_redis() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  // The server outlives the supervising thread a moment: it may get that thread's
  // parent-death SIGTERM, which stops it as stop() does.
  if (supervisor_.joinable()) supervisor_.join();
  stop();
  ::close(lock_fd_);
}

void embedded_redis::stop() {
  const std::lock_guard lock(mutex_);
  if (!running_locked()) return;
  // SIGTERM makes redis-server flush its append-only file and exit.
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 200 && running_locked(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
  if (running_locked()) ::kill(pid_, SIGKILL);
  if (pid_ > 0) {
    ::waitpid(pid_, &last_status_, 0);
    pid_ = -1;
  }
}

}  // namespace tgw::infra::redis
