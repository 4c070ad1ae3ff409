#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace tgw::test {

using bytes = std::vector<std::uint8_t>;

/// Polls `condition` until it holds or `deadline` passes. Tests wait with it; they
/// never assert on how long something took.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds deadline = std::chrono::seconds{8}) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  return condition();
}

/// A port on 127.0.0.1 held by a listening socket while this lives, so that a server
/// told to listen there finds it in use.
class taken_port {
 public:
  taken_port() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(fd_, 1) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port_ = ntohs(addr.sin_port);
  }
  ~taken_port() { ::close(fd_); }
  taken_port(const taken_port&) = delete;
  taken_port& operator=(const taken_port&) = delete;

  /// 0 if no port could be held.
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

/// A blocking TCP socket connected to `port` on 127.0.0.1, with a 2 s receive
/// timeout; -1 if the connection failed.
inline int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

/// The device side of one TCP connection, with blocking calls and a 2 s receive timeout.
class device {
 public:
  explicit device(std::uint16_t port) : fd_(connect_loopback(port)), connected_(fd_ >= 0) {}
  ~device() {
    if (fd_ >= 0) ::close(fd_);
  }
  device(const device&) = delete;
  device& operator=(const device&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  void send(const bytes& b) const { (void)::send(fd_, b.data(), b.size(), MSG_NOSIGNAL); }
  /// Exactly n bytes, or nullopt on timeout or close.
  std::optional<bytes> receive(std::size_t n) const {
    bytes out(n);
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::recv(fd_, out.data() + got, n - got, 0);
      if (r <= 0) return std::nullopt;
      got += static_cast<std::size_t>(r);
    }
    return out;
  }
  /// True when the server closed the connection (recv returns 0) within the timeout;
  /// what it sent before (a TLS server's first flight) is read past.
  [[nodiscard]] bool closed_by_server() const {
    std::uint8_t b[4096];
    for (int i = 0; i < 16; ++i) {
      const ssize_t r = ::recv(fd_, b, sizeof b, 0);
      if (r == 0) return true;
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace tgw::test
