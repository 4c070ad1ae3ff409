#include "infra/net/tls_channel.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tgw::infra::net {

tls_channel::tls_channel(const tls_server_context& context, int fd)
    : ssl_(SSL_new(context.native())) {
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd) != 1) {
    SSL_free(ssl_);
    throw std::runtime_error("cannot start a TLS session");
  }
  SSL_set_accept_state(ssl_);
}

tls_channel::~tls_channel() {
  SSL_free(ssl_);
}

// The error queue is per thread and shared by every session of the io thread: it is
// cleared before each call so that SSL_get_error judges this call alone.
tls_result tls_channel::handshake(std::string& error) {
  ERR_clear_error();
  errno = 0;
  return outcome(SSL_do_handshake(ssl_), error);
}

tls_result tls_channel::read(std::span<std::uint8_t> into, std::string& error) {
  ERR_clear_error();
  errno = 0;
  std::size_t n = 0;
  const int ret = SSL_read_ex(ssl_, into.data(), into.size(), &n);
  tls_result r = outcome(ret, error);
  if (r.status == tls_status::done) r.bytes = n;
  return r;
}

tls_result tls_channel::write(std::span<const std::uint8_t> bytes, std::string& error) {
  ERR_clear_error();
  errno = 0;
  std::size_t n = 0;
  const int ret = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &n);
  tls_result r = outcome(ret, error);
  if (r.status == tls_status::done) r.bytes = n;
  return r;
}

void tls_channel::release_buffers() {
  // Refuses (returns 0) while a buffer holds data; then they stay, as they must.
  (void)SSL_free_buffers(ssl_);
}

void tls_channel::shutdown() {
  if (SSL_is_init_finished(ssl_) == 0) return;
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);
  ERR_clear_error();
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
