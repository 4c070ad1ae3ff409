#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "infra/net/tls_context.hpp"

// OpenSSL's own type, declared so that this header does not pull in <openssl/ssl.h>.
struct ssl_st;

namespace tgw::infra::net {

/// What a non-blocking TLS call needs next.
enum class tls_status : std::uint8_t {
  done,        ///< The call did its work (bytes holds how much).
  want_read,   ///< Call again once the socket is readable.
  want_write,  ///< Call again once the socket is writable.
  closed,      ///< The peer ended the session (close_notify or a plain close).
  failed       ///< A protocol error: `error` says which.
};

struct tls_result {
  tls_status status = tls_status::failed;
  std::size_t bytes = 0;
};

/// One server-side TLS session driven straight on a non-blocking socket: the caller
/// waits for readiness (Asio's async_wait) and calls again, as with a plain socket.
/// Asio's ssl::stream is not used for device connections: it keeps two 17 KiB
/// buffers for the life of every stream, several times an idle session's whole
/// budget, whereas OpenSSL with SSL_MODE_RELEASE_BUFFERS holds none while idle.
/// Not thread-safe; a connection calls it from its own io thread only.
class tls_channel {
 public:
  /// Keeps a reference to `context` (OpenSSL counts it), so a reload does not pull
  /// it from under an open session.
  tls_channel(const tls_server_context& context, int fd);
  ~tls_channel();
  tls_channel(const tls_channel&) = delete;
  tls_channel& operator=(const tls_channel&) = delete;

  tls_result handshake(std::string& error);
  tls_result read(std::span<std::uint8_t> into, std::string& error);
  tls_result write(std::span<const std::uint8_t> bytes, std::string& error);
  /// Gives OpenSSL's read and write buffers back while nothing is in them. OpenSSL
  /// sets its 16 KiB read buffer up before the read that finds the socket empty and
  /// keeps it; an idle connection calls this once it waits for the device again.
  void release_buffers();
  /// Sends close_notify if the session is established; never waits.
  void shutdown();
  /// "TLSv1.3 TLS_AES_128_GCM_SHA256", once the handshake is done.
  [[nodiscard]] std::string describe() const;

 private:
  tls_result outcome(int ret, std::string& error);
  ssl_st* ssl_;
};

}  // namespace tgw::infra::net
