#include "infra/net/tls_key_export.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/ssl.h>

#include <cstring>
#include <string_view>
#include <vector>

namespace tgw::infra::net {
namespace {

int secrets_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

tls_handshake_secrets* secrets_of(const SSL* ssl) {
  return static_cast<tls_handshake_secrets*>(SSL_get_ex_data(ssl, secrets_index()));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Key log lines (NSS format): "LABEL <client random hex> <secret hex>".
void on_key_log(const SSL* ssl, const char* line) {
  tls_handshake_secrets* secrets = secrets_of(ssl);
  if (secrets == nullptr) return;
  const std::string_view text(line);
  std::array<std::uint8_t, 48>* into = nullptr;
  std::uint8_t* length = nullptr;
  if (text.starts_with("CLIENT_TRAFFIC_SECRET_0 ")) {
    into = &secrets->client_traffic;
    length = &secrets->client_length;
  } else if (text.starts_with("SERVER_TRAFFIC_SECRET_0 ")) {
    into = &secrets->server_traffic;
    length = &secrets->server_length;
  } else {
    return;
  }
  const std::size_t at = text.rfind(' ');
  const std::string_view hex = text.substr(at + 1);
  if (hex.size() != 64 && hex.size() != 96) return;
  for (std::size_t i = 0; i < hex.size() / 2; ++i) {
    const int hi = hex_digit(hex[2 * i]);
    const int lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return;
    (*into)[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  *length = static_cast<std::uint8_t>(hex.size() / 2);
}

// Counts the TLS 1.3 session tickets this side sent: each went out as one record
// under the application keys, so the write sequence starts after them.
void on_message(int write_p, int version, int content_type, const void* buf, std::size_t len,
                SSL* ssl, void*) {
  if (write_p == 0 || version != TLS1_3_VERSION || content_type != SSL3_RT_HANDSHAKE || len == 0)
    return;
  if (static_cast<const std::uint8_t*>(buf)[0] != SSL3_MT_NEWSESSION_TICKET) return;
  if (tls_handshake_secrets* secrets = secrets_of(ssl)) ++secrets->tickets_written;
}

// TLS 1.2 key block (RFC 5246 6.3) for an AEAD suite: no MAC keys, then the client
// and server write keys, then the two 4-byte salts.
bool tls12_keys(SSL* ssl, std::uint8_t key_length, tls_direction_keys& client,
                tls_direction_keys& server) {
  const EVP_MD* md = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(ssl));
  std::array<std::uint8_t, 48> master{};
  const std::size_t master_length =
      SSL_SESSION_get_master_key(SSL_get_session(ssl), master.data(), master.size());
  if (md == nullptr || master_length == 0) return false;
  std::vector<std::uint8_t> seed;
  for (const char c : std::string_view("key expansion"))
    seed.push_back(static_cast<std::uint8_t>(c));
  std::array<std::uint8_t, 32> random{};
  SSL_get_server_random(ssl, random.data(), random.size());
  seed.insert(seed.end(), random.begin(), random.end());
  SSL_get_client_random(ssl, random.data(), random.size());
  seed.insert(seed.end(), random.begin(), random.end());

  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, OSSL_KDF_NAME_TLS1_PRF, nullptr);
  EVP_KDF_CTX* ctx = kdf != nullptr ? EVP_KDF_CTX_new(kdf) : nullptr;
  EVP_KDF_free(kdf);
  if (ctx == nullptr) return false;
  std::string digest = EVP_MD_get0_name(md);
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest.data(), 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, master.data(), master_length),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, seed.data(), seed.size()),
      OSSL_PARAM_construct_end()};
  std::array<std::uint8_t, 2 * 32 + 2 * 4> block{};
  const std::size_t block_length = 2u * key_length + 8u;
  const bool ok = EVP_KDF_derive(ctx, block.data(), block_length, params) == 1;
  EVP_KDF_CTX_free(ctx);
  OPENSSL_cleanse(master.data(), master.size());
  if (!ok) return false;
  client.key_length = server.key_length = key_length;
  std::memcpy(client.key.data(), block.data(), key_length);
  std::memcpy(server.key.data(), block.data() + key_length, key_length);
  std::memcpy(client.iv.data(), block.data() + 2 * key_length, 4);
  std::memcpy(server.iv.data(), block.data() + 2 * key_length + 4, 4);
  OPENSSL_cleanse(block.data(), block.size());
  // The Finished messages were record 0 under these keys, one each way.
  client.sequence = server.sequence = 1;
  return true;
}

bool tls13_keys(const tls_handshake_secrets& secrets, std::uint8_t key_length,
                tls_direction_keys& client, tls_direction_keys& server) {
  if (secrets.client_length == 0 || secrets.server_length == 0) return false;
  client.key_length = server.key_length = key_length;
  client.secret = secrets.client_traffic;
  client.secret_length = secrets.client_length;
  server.secret = secrets.server_traffic;
  server.secret_length = secrets.server_length;
  return tls13_traffic_keys(client) && tls13_traffic_keys(server);
}

}  // namespace

tls_handshake_secrets::~tls_handshake_secrets() {
  OPENSSL_cleanse(client_traffic.data(), client_traffic.size());
  OPENSSL_cleanse(server_traffic.data(), server_traffic.size());
}

void capture_traffic_secrets(ssl_ctx_st* ctx) {
  SSL_CTX_set_keylog_callback(ctx, on_key_log);
}

void attach_secrets(ssl_st* ssl, tls_handshake_secrets* secrets) {
  SSL_set_ex_data(ssl, secrets_index(), secrets);
  SSL_set_msg_callback(ssl, on_message);
  SSL_set_read_ahead(ssl, 0);
}

std::unique_ptr<tls_records> export_records(ssl_st* ssl, bool is_server,
                                            const tls_handshake_secrets& secrets,
                                            std::string& why) {
  const int version = SSL_version(ssl);
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl);
  const int nid = cipher != nullptr ? SSL_CIPHER_get_cipher_nid(cipher) : NID_undef;
  if (version != TLS1_2_VERSION && version != TLS1_3_VERSION) {
    why = "protocol version not offloaded";
    return nullptr;
  }
  if (nid != NID_aes_128_gcm && nid != NID_aes_256_gcm) {
    why = "cipher not offloaded";
    return nullptr;
  }
  // OpenSSL must not hold received bytes of the session: they would be lost.
  if (SSL_has_pending(ssl) == 1 || BIO_ctrl_pending(SSL_get_rbio(ssl)) > 0) {
    why = "OpenSSL holds unread bytes";
    return nullptr;
  }
  const std::uint8_t key_length = nid == NID_aes_256_gcm ? 32 : 16;
  tls_direction_keys client;
  tls_direction_keys server;
  const bool v12 = version == TLS1_2_VERSION;
  if (!(v12 ? tls12_keys(ssl, key_length, client, server)
            : tls13_keys(secrets, key_length, client, server))) {
    why = v12 ? "key derivation failed" : "traffic secrets not captured";
    return nullptr;
  }
  if (!v12) server.sequence = secrets.tickets_written;
  SSL_set_msg_callback(ssl, nullptr);
  SSL_set_ex_data(ssl, secrets_index(), nullptr);
  auto records =
      std::make_unique<tls_records>(v12 ? tls_version::tls12 : tls_version::tls13,
                                    is_server ? client : server, is_server ? server : client);
  OPENSSL_cleanse(&client, sizeof client);
  OPENSSL_cleanse(&server, sizeof server);
  return records;
}

}  // namespace tgw::infra::net
