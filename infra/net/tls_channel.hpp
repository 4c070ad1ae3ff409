#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infra/net/tls_context.hpp"
#include "infra/net/tls_key_export.hpp"
#include "infra/net/tls_records.hpp"

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
/// OpenSSL reads ahead (one recv takes what the socket holds) through a socket BIO of
/// our own that sends with MSG_NOSIGNAL and notes whether a read emptied the socket,
/// which spares the read that would only find it empty after each packet.
/// Asio's ssl::stream is not used for device connections: it keeps two 17 KiB
/// buffers for the life of every stream, several times an idle session's whole
/// budget, whereas OpenSSL with SSL_MODE_RELEASE_BUFFERS holds none while idle.
/// Once the handshake is done, a session with an AES-GCM cipher (what devices and
/// OpenSSL negotiate first) leaves OpenSSL: the keys go to tls_records and the SSL
/// object, about 14 KiB that cannot be given back while it lives, is freed. The
/// record layer then reads the socket itself. Other ciphers stay in OpenSSL.
/// Not thread-safe; a connection calls it from its own io thread only.
class tls_channel {
 public:
  enum class role : std::uint8_t { server, client };

  /// Keeps a reference to `context` (OpenSSL counts it), so a reload does not pull
  /// it from under an open session.
  tls_channel(const tls_server_context& context, int fd);
  /// A session of either side on a context configured elsewhere (the simulator's
  /// client context). `offload`: hand an AES-GCM session to tls_records after the
  /// handshake; the context must have had capture_traffic_secrets() for TLS 1.3.
  tls_channel(ssl_ctx_st* context, int fd, role side, bool offload = true);
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
  /// Whether tls_records carries the session (OpenSSL did only the handshake).
  [[nodiscard]] bool offloaded() const { return records_ != nullptr; }
  /// An offloaded session only: bytes the caller read from the socket itself (a read
  /// queued on the socket's edge-triggered registration, which a readiness wait would
  /// re-arm with a syscall). The next read() opens them before it reads the socket,
  /// and reads the socket only if they end in part of a record and `drained` is false
  /// (that read filled its buffer, so the socket may hold more). The bytes are not
  /// copied: they must stay valid until that read, and be at most one record long.
  void received(std::span<const std::uint8_t> bytes, bool drained);

  /// After a read that returned bytes: whether another read may find more without
  /// waiting for the socket. True when OpenSSL holds bytes already read from the
  /// socket, or when that read did not empty the socket (it filled OpenSSL's buffer,
  /// or took no bytes from the socket at all). The socket is edge-triggered: bytes
  /// left in it announce themselves no more, so only an emptied socket may be
  /// waited on.
  [[nodiscard]] bool more_to_read() const;

  /// What the connection's own socket BIO knows of its last read.
  struct socket_state {
    int fd = -1;
    bool drained = false;  ///< The last recv returned less than asked, or EAGAIN.
  };

 private:
  tls_result outcome(int ret, std::string& error);
  void take_over();
  tls_result records_read(std::span<std::uint8_t> into, std::string& error);
  tls_result records_write(std::span<const std::uint8_t> bytes, std::string& error);
  tls_status flush(std::string& error);
  /// Sends `bytes` from `sent` on until the socket is full or they are all gone.
  tls_status send_from(std::span<const std::uint8_t> bytes, std::size_t& sent, std::string& error);

  socket_state socket_;
  ssl_st* ssl_;                                     ///< Null once records_ carries the session.
  std::unique_ptr<tls_handshake_secrets> secrets_;  ///< Until the handshake is done.
  std::unique_ptr<tls_records> records_;
  std::vector<std::uint8_t> partial_;  ///< Received bytes of a record not yet whole.
  std::vector<std::uint8_t> plain_;    ///< Opened bytes the caller had no room for.
  std::vector<std::uint8_t> out_;      ///< Sealed bytes the socket did not take yet.
  const char* cipher_name_ = nullptr;  ///< OpenSSL's static name, kept past SSL_free.
  bool server_;
  bool sealed_write_ = false;          ///< out_ holds the bytes of the write being repeated.
  std::span<const std::uint8_t> fed_;  ///< What received() gave, until the next read.
  bool peer_closed_ = false;           ///< close_notify came; told once plain_ is read.
};

}  // namespace tgw::infra::net
