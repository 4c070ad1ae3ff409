#pragma once

// A client that speaks bytes, not HTTP: it sends half a request, a head too large, or
// nothing at all, and sees whether the server answers or closes.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace tgw::test {

class raw_client {
 public:
  /// Connects to 127.0.0.1:port from `source` (any 127.0.0.0/8 address is this host,
  /// so a test can be several clients).
  explicit raw_client(std::uint16_t port, const char* source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  ~raw_client() { ::close(fd_); }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;
  raw_client(raw_client&& other) noexcept : fd_(other.fd_), connected_(other.connected_) {
    other.fd_ = -1;
  }
  raw_client& operator=(raw_client&&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }

  /// False once the server has closed (EPIPE, ECONNRESET).
  bool send(std::string_view data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }

  /// One response: the head, then as many body bytes as its Content-Length says.
  /// Whatever came when the server closed or `within` passed otherwise.
  std::string read_response(std::chrono::milliseconds within = std::chrono::seconds{30}) {
    const auto until = std::chrono::steady_clock::now() + within;
    std::size_t end = std::string::npos;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos)
      if (!read_some(until)) return take(pending_.size());
    const std::size_t want = end + 4 + content_length(pending_.substr(0, end));
    while (pending_.size() < want)
      if (!read_some(until)) break;
    return take(want);
  }

  /// Whether the server closes the connection within `within`; what it sent before
  /// is received().
  bool closed_by_server(std::chrono::milliseconds within = std::chrono::seconds{30}) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (true) {
      if (!read_some(until)) return !timed_out_;
    }
  }

  /// Reads until what arrived (and no read_response() took) holds `needle`; false when
  /// the server closed or `within` passed first.
  bool read_until(std::string_view needle,
                  std::chrono::milliseconds within = std::chrono::seconds{30}) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (pending_.find(needle) == std::string::npos)
      if (!read_some(until)) return false;
    return true;
  }

  /// Waits up to `within` for more bytes, appended to received(); false when none came
  /// (closed, or the time passed).
  bool read_more(std::chrono::milliseconds within) {
    return read_some(std::chrono::steady_clock::now() + within);
  }

  /// Stops reading: the socket's receive buffer fills and the server's writes stall,
  /// as with a client that no longer reads.
  void shrink_receive_buffer() {
    const int small = 1024;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  }

  /// What arrived and no read_response() took.
  [[nodiscard]] const std::string& received() const { return pending_; }

  /// Whether the connection is still open now, without waiting.
  [[nodiscard]] bool open_now() const {
    char c;
    const ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }

 private:
  // Appends what arrives before `until`; false on close, error or time out.
  bool read_some(std::chrono::steady_clock::time_point until) {
    timed_out_ = false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      timed_out_ = true;
      return false;
    }
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  static std::size_t content_length(const std::string& head) {
    for (const std::string_view name : {"Content-Length: ", "content-length: "}) {
      const auto at = head.find(name);
      if (at != std::string::npos) return std::stoul(head.substr(at + name.size()));
    }
    return 0;
  }

  std::string take(std::size_t n) {
    std::string out = pending_.substr(0, n);
    pending_.erase(0, n);
    return out;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool timed_out_ = false;
  std::string pending_;
};

}  // namespace tgw::test
