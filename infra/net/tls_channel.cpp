#include "infra/net/tls_channel.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tgw::infra::net {
namespace {

using socket_state = tls_channel::socket_state;

int socket_read(BIO* bio, char* out, int size) {
  auto* socket = static_cast<socket_state*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
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

const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tgw device socket");
    BIO_meth_set_read(m, socket_read);
    BIO_meth_set_write(m, socket_write);
    BIO_meth_set_ctrl(m, socket_ctrl);
    BIO_meth_set_create(m, socket_create);
    return m;
  }();
  return method;
}

}  // namespace

tls_channel::tls_channel(const tls_server_context& context, int fd)
    : tls_channel(context.native(), fd, role::server, context.offload_records()) {}

tls_channel::tls_channel(ssl_ctx_st* context, int fd, role side, bool offload)
    : socket_{fd, false}, ssl_(SSL_new(context)), server_(side == role::server) {
  BIO* bio = ssl_ != nullptr ? BIO_new(socket_method()) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl_);
    throw std::runtime_error("cannot start a TLS session");
  }
  BIO_set_data(bio, &socket_);
  SSL_set_bio(ssl_, bio, bio);  // The SSL owns the BIO from here.
  if (side == role::server)
    SSL_set_accept_state(ssl_);
  else
    SSL_set_connect_state(ssl_);
  if (offload) {
    secrets_ = std::make_unique<tls_handshake_secrets>();
    attach_secrets(ssl_, secrets_.get());
  }
}

tls_channel::~tls_channel() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

// The error queue is per thread and shared by every session of the io thread: it is
// cleared before each call so that SSL_get_error judges this call alone.
tls_result tls_channel::handshake(std::string& error) {
  ERR_clear_error();
  errno = 0;
  const tls_result r = outcome(SSL_do_handshake(ssl_), error);
  if (r.status == tls_status::done && secrets_) take_over();
  return r;
}

void tls_channel::take_over() {
  std::string why;
  records_ = export_records(ssl_, server_, *secrets_, why);
  secrets_.reset();
  if (!records_) {
    // OpenSSL keeps the session; it may read ahead from now on.
    SSL_set_read_ahead(ssl_, 1);
    return;
  }
  const char* name = SSL_get_cipher_name(ssl_);
  cipher_name_ = name != nullptr ? name : "-";
  SSL_free(ssl_);
  ssl_ = nullptr;
}

tls_result tls_channel::read(std::span<std::uint8_t> into, std::string& error) {
  if (records_) return records_read(into, error);
  ERR_clear_error();
  errno = 0;
  // Only a recv made by this very call may say the socket is empty now.
  socket_.drained = false;
  std::size_t n = 0;
  const int ret = SSL_read_ex(ssl_, into.data(), into.size(), &n);
  tls_result r = outcome(ret, error);
  if (r.status == tls_status::done) r.bytes = n;
  return r;
}

tls_result tls_channel::write(std::span<const std::uint8_t> bytes, std::string& error) {
  if (records_) return records_write(bytes, error);
  ERR_clear_error();
  errno = 0;
  std::size_t n = 0;
  const int ret = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &n);
  tls_result r = outcome(ret, error);
  if (r.status == tls_status::done) r.bytes = n;
  return r;
}

void tls_channel::release_buffers() {
  if (records_) {
    // A partial record and unsent bytes stay, as they must.
    if (plain_.empty()) std::vector<std::uint8_t>().swap(plain_);
    if (partial_.empty()) std::vector<std::uint8_t>().swap(partial_);
    if (out_.empty()) std::vector<std::uint8_t>().swap(out_);
    return;
  }
  // Refuses (returns 0) while a buffer holds data; then they stay, as they must.
  (void)SSL_free_buffers(ssl_);
}

void tls_channel::shutdown() {
  if (records_) {
    // close_notify (RFC 8446 6.1): level warning, description 0; never waits.
    static constexpr std::uint8_t close_notify[] = {1, 0};
    records_->seal(tls_content::alert, close_notify, out_);
    std::string ignored;
    (void)flush(ignored);
    return;
  }
  if (SSL_is_init_finished(ssl_) == 0) return;
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);
  ERR_clear_error();
}

bool tls_channel::more_to_read() const {
  if (records_) return !plain_.empty() || peer_closed_ || !socket_.drained;
  return SSL_has_pending(ssl_) == 1 || !socket_.drained;
}

std::string tls_channel::describe() const {
  if (records_)
    return std::string(records_->version() == tls_version::tls12 ? "TLSv1.2 " : "TLSv1.3 ") +
           cipher_name_;
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
        return {tls_status::failed, 0};
      }
      [[fallthrough]];
    default: {
      const unsigned long e = ERR_get_error();
      const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
      error = reason != nullptr ? reason : "unknown TLS error";
      ERR_clear_error();
      return {tls_status::failed, 0};
    }
  }
}

}  // namespace tgw::infra::net
