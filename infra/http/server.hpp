#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "infra/http/router.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/http/server_stats.hpp"

namespace tgw::infra::net {
class tls_context_source;
}

namespace tgw::infra::http {

/// Why a server could not listen on its address, in one line that names it:
/// "127.0.0.1:9127 is in use by another listener".
class listen_error : public std::runtime_error {
 public:
  listen_error(const std::string& what, bool in_use) : std::runtime_error(what), in_use_(in_use) {}
  /// The address is taken (EADDRINUSE).
  [[nodiscard]] bool in_use() const noexcept { return in_use_; }

 private:
  bool in_use_;
};

/// An HTTP/1.1 server on Boost.Beast, on io threads of its own: every socket is
/// asynchronous, so a slow or silent client holds a connection slot and a few
/// kilobytes, never a thread, and one answering probe is not held up by another
/// client. Each budget of server_limits is enforced where the bytes arrive, and every
/// refusal is a counter in stats().
class server {
 public:
  /// Listens on `address` ("127.0.0.1:9127", "[::1]:9127", "localhost:9127"; port 0:
  /// any free one) and starts serving. Counts into `stats` when given (so that a
  /// handler can report them from the first request on), else into its own. With
  /// `tls`, every connection speaks TLS (OpenSSL, through Asio's ssl::stream) with the
  /// context in force when it was accepted, shaking hands within the header deadline.
  /// Throws listen_error naming the address and the cause when it cannot listen there.
  server(const std::string& address, router routes, server_limits limits = {},
         std::shared_ptr<server_stats> stats = nullptr, std::size_t io_threads = 1,
         std::shared_ptr<net::tls_context_source> tls = nullptr);
  /// Stops accepting, closes every connection and joins the io threads. An answer
  /// given to a responder after that is dropped.
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// The port bound (the one the system chose for port 0).
  [[nodiscard]] std::uint16_t port() const noexcept;
  [[nodiscard]] const server_stats& stats() const noexcept;

  /// Thread names (`top -H`): tells the endpoint's threads from the device port's.
  static constexpr const char* thread_name = "tgw.http";

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tgw::infra::http
