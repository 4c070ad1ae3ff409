#include "tests/support/redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>

#include "tests/support/redis_tls.hpp"

namespace tgw::test {

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("bind failed");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

int spawn_process(const std::vector<std::string>& argv, const std::string& log_path,
                  std::optional<run_as> user) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    // Signals blocked in the test process must not stay blocked in the child.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (user &&
        (::setgroups(0, nullptr) != 0 || ::setgid(user->gid) != 0 || ::setuid(user->uid) != 0))
      ::_exit(126);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

redis_server::redis_server(bool durable, redis_transport transport)
    : durable_(durable), transport_(transport) {
  char tmpl[] = "/tmp/tgw-redis-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  // A free port can be taken by another test's server between free_port() closing it
  // and redis-server binding it: the server then exits at once, and a new port is
  // drawn (only here: a restart must come back on its own port).
  for (int attempt = 0;; ++attempt) {
    port_ = free_port();
    if (start_once() || attempt == 2) break;
  }
  if (pid_ <= 0)
    throw std::runtime_error("redis-server did not start (three ports tried); see " + dir_ +
                             "/redis.log");
}

redis_server::~redis_server() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool redis_server::start_once() {
  std::vector<std::string> argv = {"redis-server",
                                   "--port",
                                   std::to_string(port_),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   durable_ ? "yes" : "no",
                                   "--appendfsync",
                                   "always",
                                   "--dir",
                                   dir_};
  if (transport_ != redis_transport::plain) {
    const auto tls = redis_tls_files::shared().server_args(
        port_, transport_ == redis_transport::tls_client_certificates);
    argv.insert(argv.end(), tls.begin(), tls.end());
  }
  pid_ = spawn_process(argv, dir_ + "/redis.log");
  for (int i = 0; i < 200; ++i) {
    infra::redis::connection c(
        {endpoint(), std::chrono::milliseconds{200}, std::chrono::milliseconds{200}, ""});
    if (c.command({"PING"}).text == "PONG") return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;  // it exited: the port was taken, or it refused its arguments
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
  }
  throw std::runtime_error("redis-server did not start on port " + std::to_string(port_));
}

void redis_server::start() {
  if (pid_ > 0) return;
  if (!start_once())
    throw std::runtime_error("redis-server exited at start on port " + std::to_string(port_) +
                             "; see " + dir_ + "/redis.log");
}

void redis_server::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

infra::redis::endpoint redis_server::endpoint() const {
  infra::redis::endpoint e;
  e.host = "127.0.0.1";
  e.port = port_;
  if (transport_ != redis_transport::plain)
    e.tls =
        redis_tls_files::shared().client(transport_ == redis_transport::tls_client_certificates);
  return e;
}

std::string redis_server::url() const {
  return (transport_ == redis_transport::plain ? "redis://127.0.0.1:" : "rediss://127.0.0.1:") +
         std::to_string(port_);
}

std::string redis_server::tls_flags() const {
  return transport_ == redis_transport::plain
             ? std::string()
             : redis_tls_files::shared().flags(transport_ ==
                                               redis_transport::tls_client_certificates);
}

infra::redis::connection redis_server::connect() const {
  return infra::redis::connection(
      {endpoint(), std::chrono::milliseconds{1000}, std::chrono::milliseconds{5000}, "test"});
}

child_process::child_process(const std::vector<std::string>& argv, const std::string& log_path)
    : pid_(spawn_process(argv, log_path)) {}

child_process::child_process(child_process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(other.status_) {}

child_process::~child_process() {
  if (pid_ > 0 && running()) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    wait();
  }
}

void child_process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

bool child_process::running() {
  if (pid_ <= 0 || status_ != -1) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = status;
    return false;
  }
  return true;
}

int child_process::wait() {
  if (status_ == -1 && pid_ > 0) ::waitpid(pid_, &status_, 0);
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -1;
}

}  // namespace tgw::test
