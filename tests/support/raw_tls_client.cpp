#include "tests/support/raw_tls_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "tests/support/test_device.hpp"
#include "tests/support/tls_device.hpp"

namespace tgw::test {
namespace {

constexpr std::size_t key_size = 16;  // AES-128
constexpr std::size_t iv_size = 12;
constexpr std::size_t tag_size = 16;
constexpr std::size_t hash_size = 32;  // SHA-256
constexpr std::uint8_t key_update_type = 24;

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// HKDF-Expand-Label(secret, label, "", length) of RFC 8446 7.1, on SHA-256.
std::vector<std::uint8_t> expand_label(const std::vector<std::uint8_t>& secret,
                                       const std::string& label, std::size_t length) {
  const std::string full = "tls13 " + label;
  std::vector<std::uint8_t> info = {static_cast<std::uint8_t>(length >> 8),
                                    static_cast<std::uint8_t>(length),
                                    static_cast<std::uint8_t>(full.size())};
  info.insert(info.end(), full.begin(), full.end());
  info.push_back(0);  // empty context
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* ctx = kdf != nullptr ? EVP_KDF_CTX_new(kdf) : nullptr;
  EVP_KDF_free(kdf);
  if (ctx == nullptr) throw std::runtime_error("no HKDF in OpenSSL");
  int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
                                        const_cast<std::uint8_t*>(secret.data()), secret.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()),
      OSSL_PARAM_construct_end()};
  std::vector<std::uint8_t> out(length);
  const int ok = EVP_KDF_derive(ctx, out.data(), out.size(), params);
  EVP_KDF_CTX_free(ctx);
  if (ok != 1) throw std::runtime_error("HKDF-Expand-Label failed");
  return out;
}

}  // namespace

std::vector<std::uint8_t> client_hello_bytes() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = ctx != nullptr ? SSL_new(ctx) : nullptr;
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (ssl == nullptr || in == nullptr || out == nullptr) throw std::runtime_error("OpenSSL");
  SSL_set_bio(ssl, in, out);
  SSL_set_connect_state(ssl);
  if (SSL_do_handshake(ssl) != -1 || SSL_get_error(ssl, -1) != SSL_ERROR_WANT_READ)
    throw std::runtime_error("no ClientHello");
  char* data = nullptr;
  const long n = BIO_get_mem_data(out, &data);
  std::vector<std::uint8_t> hello(data, data + n);
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return hello;
}

raw_tls13_client::raw_tls13_client(std::uint16_t port, const std::string& proxy_header) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (ctx_ == nullptr || SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_ciphersuites(ctx_, "TLS_AES_128_GCM_SHA256") != 1)
    throw std::runtime_error("cannot set up a TLS 1.3 client context");
  SSL_CTX_set_keylog_callback(ctx_, on_key_log);
  fd_ = connect_loopback(port);
  if (fd_ < 0) {
    error_ = "cannot connect";
    return;
  }
  if (!proxy_header.empty() && ::send(fd_, proxy_header.data(), proxy_header.size(),
                                      MSG_NOSIGNAL) != static_cast<ssize_t>(proxy_header.size())) {
    error_ = "cannot send the PROXY header";
    return;
  }
  ssl_ = SSL_new(ctx_);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1 || SSL_set_app_data(ssl_, this) != 1)
    throw std::runtime_error("cannot set up a TLS client");
  SSL_set_info_callback(ssl_, on_info);
  ERR_clear_error();
  {
    const detail::sigpipe_held held;
    established_ = SSL_connect(ssl_) == 1;
  }
  if (!established_) {
    const unsigned long e = ERR_peek_last_error();
    const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
    error_ = reason != nullptr ? reason : "handshake failed";
    ERR_clear_error();
    return;
  }
  if (secret_.size() != hash_size) {
    established_ = false;
    error_ = "no client traffic secret in the key log";
    return;
  }
  derive_write_key();
}

raw_tls13_client::~raw_tls13_client() {
  SSL_free(ssl_);
  if (fd_ >= 0) ::close(fd_);
  SSL_CTX_free(ctx_);
}

// "CLIENT_TRAFFIC_SECRET_0 <client random> <secret>", in hex (NSS key log format).
void raw_tls13_client::on_key_log(const ssl_st* ssl, const char* line) {
  static constexpr std::string_view label = "CLIENT_TRAFFIC_SECRET_0 ";
  const std::string_view text(line);
  if (!text.starts_with(label)) return;
  auto* self = static_cast<raw_tls13_client*>(SSL_get_app_data(ssl));
  self->secret_ = from_hex(text.substr(text.rfind(' ') + 1));
}

void raw_tls13_client::on_info(const ssl_st* ssl, int where, int ret) {
  if ((where & SSL_CB_READ_ALERT) != SSL_CB_READ_ALERT) return;
  auto* self = static_cast<raw_tls13_client*>(SSL_get_app_data(ssl));
  self->last_alert_ = tls_alert{ret >> 8, ret & 0xFF};
}

void raw_tls13_client::derive_write_key() {
  key_ = expand_label(secret_, "key", key_size);
  iv_ = expand_label(secret_, "iv", iv_size);
  sequence_ = 0;
}

void raw_tls13_client::key_updated() {
  secret_ = expand_label(secret_, "traffic upd", hash_size);
  derive_write_key();
}

std::vector<std::uint8_t> raw_tls13_client::key_updates(int count, bool update_requested) {
  std::vector<std::uint8_t> out;
  const std::uint8_t request = update_requested ? 1 : 0;
  for (int i = 0; i < count; ++i) out.insert(out.end(), {key_update_type, 0, 0, 1, request});
  return out;
}

std::vector<std::uint8_t> raw_tls13_client::seal(std::uint8_t type,
                                                 std::span<const std::uint8_t> content) {
  std::vector<std::uint8_t> inner(content.begin(), content.end());
  inner.push_back(type);
  const std::size_t length = inner.size() + tag_size;
  std::vector<std::uint8_t> record = {tls_wire::application_data, 3, 3,
                                      static_cast<std::uint8_t>(length >> 8),
                                      static_cast<std::uint8_t>(length)};
  std::vector<std::uint8_t> nonce = iv_;
  for (int i = 0; i < 8; ++i)
    nonce[iv_size - 1 - static_cast<std::size_t>(i)] ^=
        static_cast<std::uint8_t>(sequence_ >> (8 * i));
  ++sequence_;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::vector<std::uint8_t> sealed(inner.size() + tag_size);
  int n = 0;
  int tail = 0;
  const bool ok =
      ctx != nullptr &&
      EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nullptr, key_.data(), nonce.data()) == 1 &&
      EVP_EncryptUpdate(ctx, nullptr, &n, record.data(), static_cast<int>(record.size())) == 1 &&
      EVP_EncryptUpdate(ctx, sealed.data(), &n, inner.data(), static_cast<int>(inner.size())) ==
          1 &&
      EVP_EncryptFinal_ex(ctx, sealed.data() + n, &tail) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_size),
                          sealed.data() + inner.size()) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) throw std::runtime_error("AES-128-GCM sealing failed");
  record.insert(record.end(), sealed.begin(), sealed.end());
  return record;
}

raw_tls13_client::sent raw_tls13_client::send_raw(std::span<const std::uint8_t> wire) {
  std::size_t done = 0;
  while (done < wire.size()) {
    const ssize_t n = ::send(fd_, wire.data() + done, wire.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return sent::blocked;
    if (n <= 0) return sent::closed;
    done += static_cast<std::size_t>(n);
  }
  return sent::all;
}

void raw_tls13_client::set_send_timeout(std::chrono::milliseconds timeout) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

std::optional<std::vector<std::uint8_t>> raw_tls13_client::receive(std::size_t n) {
  if (!established_) return std::nullopt;
  const detail::sigpipe_held held;
  std::vector<std::uint8_t> out(n);
  std::size_t got = 0;
  while (got < n) {
    const int r = SSL_read(ssl_, out.data() + got, static_cast<int>(n - got));
    if (r <= 0) {
      ERR_clear_error();
      return std::nullopt;
    }
    got += static_cast<std::size_t>(r);
  }
  return out;
}

std::optional<tls_alert> raw_tls13_client::alert_at_end() {
  if (!established_) return std::nullopt;
  const detail::sigpipe_held held;
  std::uint8_t b = 0;
  for (int i = 0; i < 100 && SSL_read(ssl_, &b, 1) > 0; ++i) {
  }
  ERR_clear_error();
  return last_alert_;
}

bool raw_tls13_client::closed_by_server() {
  std::uint8_t buf[4096];
  for (;;) {
    const ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
    if (r == 0) return true;
    if (r < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}

}  // namespace tgw::test
