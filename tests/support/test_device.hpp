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

/// The device side of one TCP connection, with blocking calls and a 2 s receive timeout.
class device {
 public:
  explicit device(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval tv{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~device() { ::close(fd_); }
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
  /// True when the server closed the connection (recv returns 0) within the timeout.
  [[nodiscard]] bool closed_by_server() const {
    std::uint8_t b = 0;
    for (int i = 0; i < 5; ++i) {
      const ssize_t r = ::recv(fd_, &b, 1, 0);
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
