#pragma once

// The server side of a TLS connection that sends Redis reply bytes, for the property
// test and the fuzz target of the server link's TLS read path.

#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "tests/support/redis_tls.hpp"

namespace tgw::test {

/// How the server ends its part.
enum class ending { stay_open, close_at_end, close_mid_reply, renegotiate_first };

/// The server end of a socketpair: an OpenSSL server (redis_tls_files' certificate)
/// writing through a memory BIO, so that its encrypted output goes to the socket in
/// chunks of 1 to `max_chunk` bytes (partial records, one byte at a time), and the
/// reply bytes it is given in records of random sizes.
class tls_reply_server {
 public:
  tls_reply_server(int fd, std::uint32_t seed, std::size_t max_chunk, ending how)
      : fd_(fd), rng_(seed), max_chunk_(max_chunk), how_(how) {}

  /// Runs the handshake, then writes `bytes` as the ending says; with close_at_end (or
  /// close_mid_reply, after half of them) shuts the socket down.
  void serve(const std::string& bytes) {
    const auto& files = redis_tls_files::shared();
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate_chain_file(ctx, files.server.cert.c_str());
    SSL_CTX_use_PrivateKey_file(ctx, files.server.key.c_str(), SSL_FILETYPE_PEM);
    // Renegotiation exists in TLS 1.2 only.
    if (how_ == ending::renegotiate_first) SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
    ssl_ = SSL_new(ctx);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_accept_state(ssl_);
    while (SSL_do_handshake(ssl_) != 1) {
      flush();
      if (!receive()) break;
    }
    flush();
    std::size_t end = bytes.size();
    if (how_ == ending::close_mid_reply) end = bytes.size() / 2;
    if (how_ == ending::renegotiate_first) {
      SSL_renegotiate(ssl_);
      SSL_do_handshake(ssl_);  // sends the HelloRequest
      flush();
    }
    for (std::size_t at = 0; at < end;) {
      const std::size_t record = std::min<std::size_t>(end - at, 1 + rng_() % 20'000);
      SSL_write(ssl_, bytes.data() + at, static_cast<int>(record));
      at += record;
      flush();
    }
    if (how_ == ending::renegotiate_first) {
      // The client's answer to the HelloRequest: a no_renegotiation alert.
      char sink[256];
      for (int i = 0; i < 50 && !refused_; ++i) {
        if (!receive()) break;
        const int r = SSL_read(ssl_, sink, sizeof sink);
        if (r <= 0 && ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_NO_RENEGOTIATION)
          refused_ = true;
        if (r <= 0 && SSL_get_error(ssl_, r) == SSL_ERROR_SSL) {
          // A warning alert ends a renegotiation the server asked for.
          refused_ = SSL_renegotiate_pending(ssl_) == 1 || refused_;
          break;
        }
      }
    }
    if (how_ == ending::close_mid_reply || how_ == ending::close_at_end) ::shutdown(fd_, SHUT_RDWR);
    SSL_free(ssl_);
    SSL_CTX_free(ctx);
  }
  /// Whether the client refused the renegotiation (asked for with renegotiate_first).
  [[nodiscard]] bool refused() const noexcept { return refused_; }

 private:
  // What OpenSSL wrote, to the socket in random cuts.
  void flush() {
    char buffer[4096];
    int n = 0;
    while ((n = BIO_read(out_, buffer, sizeof buffer)) > 0) {
      for (int at = 0; at < n;) {
        const int chunk = std::min<int>(n - at, 1 + static_cast<int>(rng_() % max_chunk_));
        const ssize_t sent =
            ::send(fd_, buffer + at, static_cast<std::size_t>(chunk), MSG_NOSIGNAL);
        if (sent <= 0) return;
        at += static_cast<int>(sent);
      }
    }
  }
  bool receive() {
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    BIO_write(in_, buffer, static_cast<int>(n));
    return true;
  }

  int fd_;
  std::mt19937 rng_;
  std::size_t max_chunk_;
  ending how_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
  bool refused_ = false;
};

}  // namespace tgw::test
