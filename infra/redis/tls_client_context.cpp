#include "infra/redis/tls_client_context.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "infra/redis/link_errors.hpp"

namespace tgw::infra::redis {
namespace {

std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

auto key_of(const tls_options& o) {
  return std::make_tuple(o.ca_file, o.cert_file, o.key_file, o.insecure);
}

ssl_ctx_st* make_context(const tls_options& o, std::string& error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    error = std::string(link_errors::tls_local_files) + " " + openssl_reason();
    return nullptr;
  }
  auto fail = [&](const std::string& what) {
    error = std::string(link_errors::tls_local_files) + " " + what + ": " + openssl_reason();
    SSL_CTX_free(ctx);
    return nullptr;
  };
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A server that asks to renegotiate (TLS 1.2) is refused: renegotiation has had its
  // share of attacks, and Redis never needs it.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx, o.insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
  if (!o.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, o.ca_file.c_str(), nullptr) != 1)
      return fail("--redis-tls-ca " + o.ca_file + " cannot be read as PEM certificates");
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return fail("the system's trust store cannot be read (pass --redis-tls-ca)");
  }
  if (o.cert_file.empty() != o.key_file.empty()) {
    error = std::string(link_errors::tls_local_files) +
            " --redis-tls-cert and --redis-tls-key go together: give both or neither";
    SSL_CTX_free(ctx);
    return nullptr;
  }
  if (!o.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, o.cert_file.c_str()) != 1)
      return fail("--redis-tls-cert " + o.cert_file + " cannot be read as a PEM certificate");
    if (SSL_CTX_use_PrivateKey_file(ctx, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
      return fail("--redis-tls-key " + o.key_file + " cannot be read as a PEM private key");
    if (SSL_CTX_check_private_key(ctx) != 1)
      return fail("--redis-tls-key " + o.key_file + " is not the key of --redis-tls-cert " +
                  o.cert_file);
  }
  return ctx;
}

}  // namespace

tls_client_context::~tls_client_context() {
  SSL_CTX_free(ctx_);
}

std::shared_ptr<const tls_client_context> tls_client_context::of(const tls_options& options,
                                                                 std::string& error) {
  static std::mutex mutex;
  static std::map<decltype(key_of(options)), std::weak_ptr<const tls_client_context>> made;
  const std::lock_guard lock(mutex);
  auto& slot = made[key_of(options)];
  if (auto ctx = slot.lock()) return ctx;
  ssl_ctx_st* ctx = make_context(options, error);
  if (ctx == nullptr) return nullptr;
  auto shared = std::make_shared<const tls_client_context>(ctx, options);
  slot = shared;
  return shared;
}

}  // namespace tgw::infra::redis
