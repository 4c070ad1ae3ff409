#include "infra/net/tls_channel.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tgw::infra::net {
namespace {

using socket_state = tls_channel::socket_state;

int socket_read(BIO* bio, char* out, int size) {
  auto* socket = static_cast<socket_state*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (!socket->may_receive) {
    // This call had its receive: OpenSSL is told to retry, and the connection reads
    // on in a later turn. `drained` stays what that receive found.
    BIO_set_retry_read(bio);
    return -1;
  }
  socket->may_receive = false;
  const ssize_t n = ::recv(socket->fd, out, static_cast<std::size_t>(size), 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      socket->drained = true;
      BIO_set_retry_read(bio);
    }
    return -1;
  }
  socket->drained = n < size;
  return static_cast<int>(n);
}

// MSG_NOSIGNAL: a device gone mid-write is an EPIPE for this connection, never a
// SIGPIPE for the process.
int socket_write(BIO* bio, const char* in, int size) {
  auto* socket = static_cast<socket_state*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(socket->fd, in, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(bio);
    return -1;
  }
  return static_cast<int>(n);
}

long socket_ctrl(BIO*, int command, long, void*) {
  // Writes go straight to the socket, so a flush has nothing to do; every other
  // control (kTLS, peeking at the fd) is declined.
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int socket_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

BIO_METHOD* make_socket_method() {
  const int index = BIO_get_new_index();
  if (index == -1) return nullptr;
  BIO_METHOD* m = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "tgw device socket");
  if (m == nullptr) return nullptr;
  if (BIO_meth_set_read(m, socket_read) != 1 || BIO_meth_set_write(m, socket_write) != 1 ||
      BIO_meth_set_ctrl(m, socket_ctrl) != 1 || BIO_meth_set_create(m, socket_create) != 1) {
    BIO_meth_free(m);
    return nullptr;
  }
  return m;
}

// Made once for the process; null if OpenSSL could not make it, and then every
// session fails to start, with the reason.
const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = make_socket_method();
  return method;
}

}  // namespace

tls_channel::tls_channel(const tls_server_context& context, int fd)
    : tls_channel(context.native(), fd, role::server) {}

tls_channel::tls_channel(ssl_ctx_st* context, int fd, role side)
    : socket_{fd, false, true}, ssl_(SSL_new(context)) {
  const BIO_METHOD* method = socket_method();
  BIO* bio = ssl_ != nullptr && method != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl_);
    ERR_clear_error();
    throw std::runtime_error("cannot start a TLS session (OpenSSL out of memory?)");
  }
  BIO_set_data(bio, &socket_);
  SSL_set_bio(ssl_, bio, bio);  // The SSL owns the BIO from here.
  SSL_set_msg_callback(ssl_, on_message);
  if (SSL_set_msg_callback_arg(ssl_, this) != 1) {
    SSL_free(ssl_);
    ERR_clear_error();
    throw std::runtime_error("cannot start a TLS session (message callback refused)");
  }
  if (side == role::server)
    SSL_set_accept_state(ssl_);
  else
    SSL_set_connect_state(ssl_);
}

tls_channel::~tls_channel() {
  SSL_free(ssl_);
}

// The error queue is per thread and shared by every session of the io thread: it is
// cleared before each call so that SSL_get_error judges this call alone.
void tls_channel::begin_call() {
  ERR_clear_error();
  errno = 0;
  // Only a recv made by this very call may say the socket is empty now.
  socket_.drained = false;
  socket_.may_receive = true;
}

tls_result tls_channel::handshake(std::string& error) {
  begin_call();
  return outcome(SSL_do_handshake(ssl_), error);
}

void tls_channel::on_message(int write_p, int, int content_type, const void* buf, std::size_t len,
                             ssl_st*, void* arg) {
  if (write_p != 0 || content_type != SSL3_RT_HANDSHAKE || len == 0) return;
  if (*static_cast<const std::uint8_t*>(buf) != SSL3_MT_KEY_UPDATE) return;
  ++static_cast<tls_channel*>(arg)->key_updates_in_a_row_;
}

tls_result tls_channel::read(std::span<std::uint8_t> into, std::string& error) {
  begin_call();
  std::size_t n = 0;
  const int ret = SSL_read_ex(ssl_, into.data(), into.size(), &n);
  tls_result r = outcome(ret, error);
  if (r.status == tls_status::done) {
    r.bytes = n;
    // Application data after the updates that came before it: those were a device's.
    if (key_updates_in_a_row_ <= max_key_updates_in_a_row) key_updates_in_a_row_ = 0;
  }
  if (key_updates_in_a_row_ > max_key_updates_in_a_row && r.status != tls_status::failed) {
    error = std::to_string(key_updates_in_a_row_) +
            " TLS KeyUpdates without application data between them (at most " +
            std::to_string(max_key_updates_in_a_row) + ")";
    failed_ = true;
    return {tls_status::failed, 0};
  }
  return r;
}

tls_result tls_channel::write(std::span<const std::uint8_t> bytes, std::string& error) {
  begin_call();
  std::size_t n = 0;
  const int ret = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &n);
  tls_result r = outcome(ret, error);
  if (r.status == tls_status::done) r.bytes = n;
  return r;
}

bool tls_channel::release_buffers() {
  return SSL_free_buffers(ssl_) == 1;
}

tls_result tls_channel::shutdown(std::string& error) {
  // Before the handshake ends there is no session to close; after a fatal alert,
  // OpenSSL's alert was the last word and nothing may follow it.
  if (failed_ || SSL_is_init_finished(ssl_) != 1 ||
      (SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN) != 0)
    return {tls_status::closed, 0};
  begin_call();
  const int ret = SSL_shutdown(ssl_);
  // 0: close_notify went out and the peer's has not come, which is not waited for.
  if (ret >= 0) return {tls_status::done, 0};
  return outcome(ret, error);
}

bool tls_channel::more_to_read() const {
  return SSL_has_pending(ssl_) == 1 || !socket_.drained;
}

std::string tls_channel::describe() const {
  const char* cipher = SSL_get_cipher_name(ssl_);
  return std::string(SSL_get_version(ssl_)) + " " + (cipher != nullptr ? cipher : "-");
}

tls_result tls_channel::outcome(int ret, std::string& error) {
  if (ret > 0) return {tls_status::done, 0};
  const int saved_errno = errno;
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
      return {tls_status::want_read, 0};
    case SSL_ERROR_WANT_WRITE:
      return {tls_status::want_write, 0};
    case SSL_ERROR_ZERO_RETURN:
      return {tls_status::closed, 0};
    case SSL_ERROR_SYSCALL:
      // No OpenSSL error and no errno: the peer closed the socket without
      // close_notify, which devices that lose power do all the time.
      if (ERR_peek_error() == 0 && saved_errno == 0) return {tls_status::closed, 0};
      if (ERR_peek_error() == 0) {
        error = std::strerror(saved_errno);
        failed_ = true;
        return {tls_status::failed, 0};
      }
      [[fallthrough]];
    default: {
      // The last error is the TLS layer's verdict ("decryption failed or bad record
      // mac"); those before it are the steps that led there ("cipher operation
      // failed").
      const unsigned long e = ERR_peek_last_error();
      const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
      error = reason != nullptr ? reason : "unknown TLS error";
      ERR_clear_error();
      failed_ = true;
      return {tls_status::failed, 0};
    }
  }
}

}  // namespace tgw::infra::net
