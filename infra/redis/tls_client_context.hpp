#pragma once

#include <memory>
#include <string>

#include "infra/redis/redis_url.hpp"

struct ssl_ctx_st;

namespace tgw::infra::redis {

/// OpenSSL's client context for one set of tls_options: TLS 1.2 or later, renegotiation
/// refused, the server's certificate checked against --redis-tls-ca (or the system's
/// trust store) unless insecure, and the client certificate when one is given. Made
/// once per set of options and shared by every link that uses them (OpenSSL lets
/// threads make connections from one context), so a reconnect does not read the files
/// again: a changed CA file or client certificate is read at the next start.
class tls_client_context {
 public:
  /// The context of `options`, made on first use. nullptr with `error` set (it names the
  /// file and OpenSSL's reason) when a file cannot be read or the key does not fit.
  static std::shared_ptr<const tls_client_context> of(const tls_options& options,
                                                      std::string& error);

  explicit tls_client_context(ssl_ctx_st* ctx, tls_options options)
      : ctx_(ctx), options_(std::move(options)) {}
  ~tls_client_context();
  tls_client_context(const tls_client_context&) = delete;
  tls_client_context& operator=(const tls_client_context&) = delete;

  [[nodiscard]] ssl_ctx_st* get() const noexcept { return ctx_; }
  [[nodiscard]] const tls_options& options() const noexcept { return options_; }

 private:
  ssl_ctx_st* ctx_;
  tls_options options_;
};

}  // namespace tgw::infra::redis
