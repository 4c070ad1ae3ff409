#include "infra/process/service_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace tgw::infra::process {
namespace {

std::string environment(const char* name) {
  // Read once at start-up, before the gateway starts its threads.
  // NOLINTNEXTLINE(concurrency-mt-unsafe)
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

service_notifier::service_notifier() : socket_path_(environment("NOTIFY_SOCKET")) {
  const std::string usec = environment("WATCHDOG_USEC");
  const std::string pid = environment("WATCHDOG_PID");
  // WATCHDOG_PID, when set, names the process the watchdog is for: not a child of it.
  if (!usec.empty() && (pid.empty() || pid == std::to_string(::getpid())))
    watchdog_ = std::chrono::microseconds{std::strtoll(usec.c_str(), nullptr, 10)};
}

service_notifier::~service_notifier() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool service_notifier::notify(std::string_view state) const {
  if (socket_path_.empty()) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, socket_path_.data(), socket_path_.size());
  // "@name" is an abstract socket: its first byte is NUL.
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path_.size());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&addr), length);
  ::close(fd);
  return sent == static_cast<ssize_t>(state.size());
}

void service_notifier::start_watchdog(std::function<bool()> alive) {
  if (socket_path_.empty() || watchdog_.count() <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this, alive = std::move(alive)] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      if (alive()) notify("WATCHDOG=1");
      lock.lock();
      wake_.wait_for(lock, watchdog_ / 2, [this] { return stopping_; });
    }
  });
}

}  // namespace tgw::infra::process
