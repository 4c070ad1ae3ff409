#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "infra/net/tls_context.hpp"

// OpenSSL's own type, declared so that this header does not pull in <openssl/ssl.h>.
struct ssl_st;

namespace tgw::infra::net {

/// What a non-blocking TLS call needs next.
enum class tls_status : std::uint8_t {
  done,        ///< The call did its work (bytes holds how much).
  want_read,   ///< Call again once the socket is readable (or at once: more_to_read()).
  want_write,  ///< Call again once the socket is writable.
  closed,      ///< The peer ended the session (close_notify or a plain close).
  failed       ///< A protocol error: `error` says which.
};

struct tls_result {
  tls_status status = tls_status::failed;
  std::size_t bytes = 0;
};

/// One TLS session, OpenSSL's from handshake to close, driven straight on a
/// non-blocking socket: the caller waits for readiness (Asio's async_wait) and calls
/// again, as with a plain socket. OpenSSL reads ahead (one recv takes what the socket
/// holds) through a socket BIO of our own, which sends with MSG_NOSIGNAL, notes whether
/// a read emptied the socket, and lets each call receive from the socket once.
///
/// That one receive a call bounds the work a peer can put on the io thread in one
/// turn: OpenSSL goes through the records of one buffer (at most 16 KiB and a bit),
/// then the call returns want_read with more_to_read() true, and the connection reads
/// on in a later turn, after the others on its thread. Without it, a peer that sends
/// protocol messages (KeyUpdates, empty records, alerts) faster than they are handled
/// keeps OpenSSL's read loop, and the thread, to itself.
///
/// OpenSSL answers each TLS 1.3 KeyUpdate (with one of its own when asked) and counts
/// none, so a session also ends after max_key_updates_in_a_row KeyUpdates without
/// application data between them: a device updates its keys after gigabytes, never
/// twice in a row, and each update costs the gateway several key derivations. No
/// alert follows that end (OpenSSL offers no way to send one of our choosing), and
/// no close_notify either: the session did not end in order.
///
/// Asio's ssl::stream is not used for device connections: it keeps two 17 KiB buffers
/// for the life of every stream, whereas OpenSSL with SSL_MODE_RELEASE_BUFFERS and
/// release_buffers() holds none while a session is idle.
/// Not thread-safe; a connection calls it from its own io thread only.
class tls_channel {
 public:
  enum class role : std::uint8_t { server, client };

  static constexpr std::uint32_t max_key_updates_in_a_row = 8;

  /// Keeps a reference to `context` (OpenSSL counts it), so a reload does not pull
  /// it from under an open session. Throws std::runtime_error if OpenSSL cannot make
  /// the session.
  tls_channel(const tls_server_context& context, int fd);
  /// A session of either side on a context configured elsewhere (the simulator's
  /// client context).
  tls_channel(ssl_ctx_st* context, int fd, role side);
  ~tls_channel();
  tls_channel(const tls_channel&) = delete;
  tls_channel& operator=(const tls_channel&) = delete;

  tls_result handshake(std::string& error);
  tls_result read(std::span<std::uint8_t> into, std::string& error);
  /// A write that returns want_write or want_read is repeated with the same bytes.
  tls_result write(std::span<const std::uint8_t> bytes, std::string& error);
  /// Gives OpenSSL's read and write buffers back while nothing is in them. OpenSSL
  /// sets its 16 KiB read buffer up before the read that finds the socket empty and
  /// keeps it; an idle connection calls this once it waits for the device again.
  /// False when a buffer still holds bytes (part of a record, an unsent write): then
  /// they stay, as they must.
  bool release_buffers();
  /// Sends close_notify if the session is established and has not failed; never
  /// waits. done: it went out; want_write: the socket was full; closed: nothing to
  /// send (no session yet, a fatal alert or a failure ended it); failed: `error`
  /// says why.
  tls_result shutdown(std::string& error);
  /// "TLSv1.3 TLS_AES_128_GCM_SHA256", once the handshake is done.
  [[nodiscard]] std::string describe() const;

  /// After a read: whether another read may find more without waiting for the socket.
  /// True when OpenSSL holds bytes already read from the socket, or when the last read
  /// did not empty the socket (it filled OpenSSL's buffer, or its one receive was
  /// spent). The socket is edge-triggered for reads queued on it: bytes left in it
  /// announce themselves no more, so only an emptied socket may be waited on.
  [[nodiscard]] bool more_to_read() const;
  /// After a call that returned want_read: whether its receive emptied the socket.
  /// False when the call's one receive was spent with bytes left in the socket: read
  /// again (in a later turn) rather than wait for readiness.
  [[nodiscard]] bool socket_drained() const { return socket_.drained; }

  /// What the connection's own socket BIO knows of the call in progress.
  struct socket_state {
    int fd = -1;
    bool drained = false;     ///< The last recv returned less than asked, or EAGAIN.
    bool may_receive = true;  ///< This call has not received from the socket yet.
  };

 private:
  tls_result outcome(int ret, std::string& error);
  /// Before each OpenSSL call: a fresh error queue and one receive.
  void begin_call();
  /// OpenSSL's message callback: counts the peer's KeyUpdates.
  static void on_message(int write_p, int version, int content_type, const void* buf,
                         std::size_t len, ssl_st* ssl, void* arg);

  socket_state socket_;
  ssl_st* ssl_;
  std::uint32_t key_updates_in_a_row_ = 0;
  bool failed_ = false;  ///< A call failed: the session is over, nothing more is sent.
};

}  // namespace tgw::infra::net
