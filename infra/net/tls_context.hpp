#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

// OpenSSL's own type, declared so that this header does not pull in <openssl/ssl.h>.
struct ssl_ctx_st;

namespace tgw::infra::net {

/// Where the device port's TLS material comes from; every field is a `tgw serve` flag.
struct tls_settings {
  std::string cert_file;  ///< PEM: the certificate, then any intermediates.
  std::string key_file;   ///< PEM: its private key.
  /// PEM CAs that sign device certificates. Empty: devices present none (the usual
  /// Teltonika set-up). Set: a device without a certificate from one of them is refused.
  std::string client_ca_file;
  /// OpenSSL cipher list for TLS 1.2; TLS 1.3 suites are OpenSSL's defaults.
  std::string ciphers = default_ciphers;

  /// ECDHE key exchange only (forward secrecy), AEAD first, then the AES-CBC suites
  /// that the embedded TLS stacks of trackers often stop at (docs/OPERATIONS.md).
  static constexpr const char* default_ciphers =
      "ECDHE+AESGCM:ECDHE+CHACHA20:ECDHE+AES:!aNULL:!eNULL";
};

/// A loaded server context: certificate, key, protocol versions (TLS 1.2 and 1.3),
/// ciphers. Connections take a reference when they start, so a context replaced on
/// SIGHUP lives on in the connections that use it.
class tls_server_context {
 public:
  /// Nullptr with `error` set when a file is missing or unreadable, the key does not
  /// match the certificate, or a setting is refused by OpenSSL.
  static std::shared_ptr<const tls_server_context> load(const tls_settings& settings,
                                                        std::string& error);
  ~tls_server_context();
  tls_server_context(const tls_server_context&) = delete;
  tls_server_context& operator=(const tls_server_context&) = delete;

  [[nodiscard]] ssl_ctx_st* native() const { return ctx_; }
  /// "subject CN=..., issuer ..., valid until ..., SHA-256 ab:cd:...", for logs.
  [[nodiscard]] const std::string& description() const { return description_; }
  [[nodiscard]] const std::string& fingerprint() const { return fingerprint_; }
  /// What is wrong but not fatal: a private key file that group or others may read.
  [[nodiscard]] const std::string& warning() const { return warning_; }
  /// When the certificate expires, for the expiry metric.
  [[nodiscard]] std::chrono::system_clock::time_point not_after() const { return not_after_; }

 private:
  explicit tls_server_context(ssl_ctx_st* ctx) : ctx_(ctx) {}
  ssl_ctx_st* ctx_;
  std::string description_;
  std::string fingerprint_;
  std::string warning_;
  std::chrono::system_clock::time_point not_after_{};
};

/// The context new TLS connections use, replaced whole by reload(); thread-safe.
class tls_context_source {
 public:
  tls_context_source(tls_settings settings, std::shared_ptr<const tls_server_context> first);

  [[nodiscard]] std::shared_ptr<const tls_server_context> current() const;

  /// Loads the files again. On success the new context serves every new connection
  /// (open ones keep theirs) and `report` says what changed; on failure the old one
  /// stays and `report` says why.
  bool reload(std::string& report);

 private:
  const tls_settings settings_;
  mutable std::mutex mutex_;
  std::shared_ptr<const tls_server_context> current_;
};

}  // namespace tgw::infra::net
