#pragma once

// The device side of a TLS connection for tests, with blocking OpenSSL calls, and the
// certificates it needs: a CA, and leaf certificates it signs, written as PEM files.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tgw::test {

/// A certificate and its key as PEM files.
struct pem_files {
  std::string cert;
  std::string key;
};

/// What a leaf certificate holds beyond its name: the subject alternative names, and
/// its validity in days from now (a negative end makes an expired certificate).
struct cert_spec {
  std::string alt_names = "IP:127.0.0.1";
  long valid_from_days = 0;
  long valid_to_days = 30;
};

namespace detail {

inline EVP_PKEY* new_key() {
  return EVP_EC_gen("P-256");
}

inline void write_pem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  if (cert != nullptr) PEM_write_X509(f, cert);
  if (key != nullptr) PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
}

inline EVP_PKEY* read_key(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  EVP_PKEY* key = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  return key;
}

inline X509* read_cert(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  return cert;
}

inline void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// Signs a certificate for `name` with `issuer` (null: self-signed).
inline pem_files make_cert(const std::string& dir, const std::string& name, bool is_ca,
                           const pem_files* issuer, long serial, const cert_spec& spec = {}) {
  EVP_PKEY* key = new_key();
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), 86400L * spec.valid_from_days - 3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400L * spec.valid_to_days);
  X509_set_pubkey(cert, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  X509* issuer_cert = issuer != nullptr ? read_cert(issuer->cert) : cert;
  EVP_PKEY* issuer_key = issuer != nullptr ? read_key(issuer->key) : key;
  X509_set_issuer_name(cert, X509_get_subject_name(issuer_cert));
  add_extension(cert, issuer_cert, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (!is_ca) add_extension(cert, issuer_cert, NID_subject_alt_name, spec.alt_names.c_str());
  X509_sign(cert, issuer_key, EVP_sha256());
  pem_files out{dir + "/" + name + ".crt", dir + "/" + name + ".key"};
  write_pem(out.cert, cert, nullptr);
  write_pem(out.key, nullptr, key);
  if (issuer != nullptr) {
    X509_free(issuer_cert);
    EVP_PKEY_free(issuer_key);
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace detail

/// A self-signed CA in `dir`.
inline pem_files make_ca(const std::string& dir, const std::string& name) {
  return detail::make_cert(dir, name, true, nullptr, 1);
}

/// A certificate for `name` signed by `ca`; `serial` tells two apart.
inline pem_files make_signed(const std::string& dir, const std::string& name, const pem_files& ca,
                             long serial, const cert_spec& spec = {}) {
  return detail::make_cert(dir, name, false, &ca, serial, spec);
}

namespace detail {

/// OpenSSL writes to the socket with plain write(): a gateway that refused the device
/// (a rejected client certificate) and closed first turns the device's next write into
/// a SIGPIPE, which would end the whole test binary. While one lives, a SIGPIPE raised
/// on this thread is held and then discarded, so the write fails with EPIPE on this
/// device's connection alone. Nothing process-wide changes: tests that count on a
/// SIGPIPE to expose a write without MSG_NOSIGNAL elsewhere keep their strength.
class sigpipe_held {
 public:
  sigpipe_held() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~sigpipe_held() {
    if (!was_pending_) {
      const timespec now{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &now) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  sigpipe_held(const sigpipe_held&) = delete;
  sigpipe_held& operator=(const sigpipe_held&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t previous_{};
  bool was_pending_ = false;
};

}  // namespace detail

/// What a TLS device is told before it connects.
struct tls_client_options {
  std::string trusted_ca;    ///< Verify the gateway against it; empty: no verification.
  pem_files certificate;     ///< Presented to the gateway; empty: none.
  std::string proxy_header;  ///< Written in plain before the handshake, as a balancer does.
};

/// A device speaking TLS over one TCP connection, blocking, 2 s receive timeout.
class tls_device {
 public:
  tls_device(std::uint16_t port, const tls_client_options& options = {}) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    if (!options.trusted_ca.empty()) {
      SSL_CTX_load_verify_locations(ctx_, options.trusted_ca.c_str(), nullptr);
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    }
    if (!options.certificate.cert.empty()) {
      SSL_CTX_use_certificate_file(ctx_, options.certificate.cert.c_str(), SSL_FILETYPE_PEM);
      SSL_CTX_use_PrivateKey_file(ctx_, options.certificate.key.c_str(), SSL_FILETYPE_PEM);
    }
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    timeval tv{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (!options.proxy_header.empty())
      (void)::send(fd_, options.proxy_header.data(), options.proxy_header.size(), MSG_NOSIGNAL);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    ERR_clear_error();
    {
      const detail::sigpipe_held held;
      established_ = SSL_connect(ssl_) == 1;
    }
    if (!established_) {
      const unsigned long e = ERR_get_error();
      const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
      error_ = reason != nullptr ? reason : "handshake failed";
      ERR_clear_error();
    }
  }
  ~tls_device() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    SSL_CTX_free(ctx_);
  }
  tls_device(const tls_device&) = delete;
  tls_device& operator=(const tls_device&) = delete;

  /// The TLS handshake succeeded.
  [[nodiscard]] bool established() const { return established_; }
  /// Why it did not.
  [[nodiscard]] const std::string& error() const { return error_; }

  void send(const std::vector<std::uint8_t>& b) {
    const detail::sigpipe_held held;
    if (established_) (void)SSL_write(ssl_, b.data(), static_cast<int>(b.size()));
  }
  /// Exactly n bytes, or nullopt on timeout or close.
  std::optional<std::vector<std::uint8_t>> receive(std::size_t n) {
    if (!established_) return std::nullopt;
    const detail::sigpipe_held held;  // a TLS 1.3 read may write (a key update's answer)
    std::vector<std::uint8_t> out(n);
    std::size_t got = 0;
    while (got < n) {
      const int r = SSL_read(ssl_, out.data() + got, static_cast<int>(n - got));
      if (r <= 0) return std::nullopt;
      got += static_cast<std::size_t>(r);
    }
    return out;
  }
  /// True when the gateway ended the connection within the timeout.
  [[nodiscard]] bool closed_by_server() {
    const detail::sigpipe_held held;
    std::uint8_t b = 0;
    for (int i = 0; i < 5; ++i) {
      const int r = established_ ? SSL_read(ssl_, &b, 1) : static_cast<int>(::recv(fd_, &b, 1, 0));
      if (r == 0) return true;
      if (r < 0) {
        if (!established_) return errno != EAGAIN && errno != EWOULDBLOCK;
        const int e = SSL_get_error(ssl_, r);
        if (e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SSL) return true;
        if (e == SSL_ERROR_SYSCALL && errno != EAGAIN && errno != EWOULDBLOCK) return true;
      }
    }
    return false;
  }
  /// Drops the connection with a reset (SO_LINGER 0), as a device losing coverage
  /// mid-session looks to the gateway: its next write finds the peer gone.
  void reset() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd_);
    fd_ = -1;
  }
  /// The common name of the certificate the gateway presented.
  [[nodiscard]] std::string server_name() const {
    if (!established_) return "";
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return "";
    char cn[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
    X509_free(cert);
    return cn;
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool established_ = false;
  std::string error_;
};

}  // namespace tgw::test
