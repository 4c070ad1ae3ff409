#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "infra/redis/redis_url.hpp"

struct ssl_st;

namespace tgw::infra::redis {

class tls_client_context;

/// The bytes of one connection to a Redis server: a TCP or unix socket of its own,
/// non-blocking, with OpenSSL's TLS over it when the endpoint asks for it (records,
/// handshake, alerts and close are all OpenSSL's). Every wait is a poll() with the
/// caller's timeout, so a blocking command keeps its deadline under TLS as in plain.
///
/// Errors are one line naming what happened, with the phrases of link_errors.hpp where
/// the cause is known (a refused connect, a certificate, a silent server). Those of
/// connect() and of TLS name the server; a plain read's or write's is the system's
/// words alone, for the caller to put its name to.
class socket_stream {
 public:
  enum class status { ok, timeout, closed, failed };

  socket_stream() = default;
  ~socket_stream() { close(); }
  socket_stream(const socket_stream&) = delete;
  socket_stream& operator=(const socket_stream&) = delete;

  /// Connects to `target` (TCP or unix socket) and, with `tls`, makes the TLS handshake,
  /// verifying the server's certificate and name as the context says. `label` names the
  /// server in errors; `timeout` bounds the connect and the handshake each.
  bool connect(const endpoint& target, std::shared_ptr<const tls_client_context> tls,
               std::string_view label, std::chrono::milliseconds timeout, std::string& error);

  /// Takes a connected socket (for tests and the fuzz target: one end of a socketpair)
  /// and, with `tls`, makes the handshake on it, checking `server_name`.
  bool adopt(int fd, std::shared_ptr<const tls_client_context> tls, std::string_view server_name,
             std::string_view label, std::chrono::milliseconds timeout, std::string& error);

  void close() noexcept;
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  [[nodiscard]] bool is_tls() const noexcept { return ssl_ != nullptr; }

  /// Reads what has arrived, at least one byte, waiting up to `timeout` for it.
  status read_some(char* buffer, std::size_t capacity, std::size_t& got,
                   std::chrono::milliseconds timeout, std::string& error);
  /// Writes all of `bytes`, waiting up to `timeout` each time the socket is full.
  status write_all(std::string_view bytes, std::chrono::milliseconds timeout, std::string& error);

 private:
  bool start_tls(std::shared_ptr<const tls_client_context> tls, std::string_view server_name,
                 std::chrono::milliseconds timeout, std::string& error);
  /// Waits until the socket is readable (or writable); false at the timeout.
  bool wait(bool for_write, std::chrono::milliseconds timeout) const;
  status tls_failure(int ret, std::string_view doing, std::string& error);

  int fd_ = -1;
  ssl_st* ssl_ = nullptr;
  std::shared_ptr<const tls_client_context> tls_;  ///< Outlives ssl_.
  std::string label_;
  std::string checked_name_;  ///< The name or address the certificate must hold.
};

}  // namespace tgw::infra::redis
