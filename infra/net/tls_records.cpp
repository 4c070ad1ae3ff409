#include "infra/net/tls_records.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <algorithm>
#include <cstring>

namespace tgw::infra::net {
namespace {

constexpr std::size_t tag_size = 16;
constexpr std::size_t explicit_nonce_size = 8;  // TLS 1.2 GCM (RFC 5288 3)

// One cipher context per io thread, per AES key size and direction. Keying a context
// for each record costs an AES key expansion and a GHASH table, a fraction of a µs
// with AES-NI; keeping a keyed context per session would cost about 1 KiB each.
class thread_ciphers {
 public:
  thread_ciphers() {
    for (std::size_t i = 0; i < contexts_.size(); ++i) {
      contexts_[i] = EVP_CIPHER_CTX_new();
      const EVP_CIPHER* cipher = (i & 2) != 0 ? EVP_aes_256_gcm() : EVP_aes_128_gcm();
      EVP_CipherInit_ex(contexts_[i], cipher, nullptr, nullptr, nullptr, static_cast<int>(i & 1));
    }
  }
  ~thread_ciphers() {
    for (EVP_CIPHER_CTX* c : contexts_) EVP_CIPHER_CTX_free(c);
  }
  thread_ciphers(const thread_ciphers&) = delete;
  thread_ciphers& operator=(const thread_ciphers&) = delete;

  EVP_CIPHER_CTX* get(std::uint8_t key_length, bool encrypt) {
    return contexts_[(key_length == 32 ? 2 : 0) | (encrypt ? 1 : 0)];
  }

 private:
  std::array<EVP_CIPHER_CTX*, 4> contexts_{};
};

EVP_CIPHER_CTX* cipher_for(const tls_direction_keys& keys, bool encrypt) {
  thread_local thread_ciphers ciphers;
  return ciphers.get(keys.key_length, encrypt);
}

void put_u16(std::uint8_t* at, std::size_t v) {
  at[0] = static_cast<std::uint8_t>(v >> 8);
  at[1] = static_cast<std::uint8_t>(v);
}

void put_u64(std::uint8_t* at, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    at[i] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}

// The per-record nonce: TLS 1.2 salt || explicit part (the sequence number, as
// OpenSSL sends it); TLS 1.3 the IV with the sequence number XORed into its end.
std::array<std::uint8_t, 12> nonce_of(tls_version version, const tls_direction_keys& keys,
                                      const std::uint8_t* explicit_part) {
  std::array<std::uint8_t, 12> nonce{};
  if (version == tls_version::tls12) {
    std::memcpy(nonce.data(), keys.iv.data(), 4);
    std::memcpy(nonce.data() + 4, explicit_part, explicit_nonce_size);
  } else {
    nonce = keys.iv;
    std::array<std::uint8_t, 8> seq{};
    put_u64(seq.data(), keys.sequence);
    for (std::size_t i = 0; i < 8; ++i) nonce[4 + i] ^= seq[i];
  }
  return nonce;
}

// AES-GCM over `data` in place with `aad`; the tag is written to or checked against
// `tag`. False if OpenSSL failed or, decrypting, the tag did not match.
bool gcm(const tls_direction_keys& keys, bool encrypt, const std::array<std::uint8_t, 12>& nonce,
         std::span<const std::uint8_t> aad, std::span<std::uint8_t> data, std::uint8_t* tag) {
  EVP_CIPHER_CTX* ctx = cipher_for(keys, encrypt);
  int n = 0;
  if (EVP_CipherInit_ex(ctx, nullptr, nullptr, keys.key.data(), nonce.data(), encrypt ? 1 : 0) !=
          1 ||
      EVP_CipherUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size())) != 1)
    return false;
  if (!data.empty() &&
      EVP_CipherUpdate(ctx, data.data(), &n, data.data(), static_cast<int>(data.size())) != 1)
    return false;
  if (!encrypt && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, tag_size, tag) != 1) return false;
  if (EVP_CipherFinal_ex(ctx, data.data() + data.size(), &n) != 1) return false;
  return !encrypt || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, tag_size, tag) == 1;
}

}  // namespace

bool tls13_expand_label(std::span<const std::uint8_t> secret, std::string_view label,
                        std::span<std::uint8_t> out) {
  // HkdfLabel: uint16 length, opaque label<7..255> ("tls13 " + label), context<0..255>.
  std::vector<std::uint8_t> info;
  info.reserve(4 + 6 + label.size());
  info.push_back(static_cast<std::uint8_t>(out.size() >> 8));
  info.push_back(static_cast<std::uint8_t>(out.size()));
  info.push_back(static_cast<std::uint8_t>(6 + label.size()));
  for (const char c : std::string_view("tls13 ")) info.push_back(static_cast<std::uint8_t>(c));
  for (const char c : label) info.push_back(static_cast<std::uint8_t>(c));
  info.push_back(0);

  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, OSSL_KDF_NAME_HKDF, nullptr);
  EVP_KDF_CTX* ctx = kdf != nullptr ? EVP_KDF_CTX_new(kdf) : nullptr;
  EVP_KDF_free(kdf);
  if (ctx == nullptr) return false;
  char digest[] = "SHA384";
  if (secret.size() == 32) std::strcpy(digest, "SHA256");
  int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
                                        const_cast<std::uint8_t*>(secret.data()), secret.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()),
      OSSL_PARAM_construct_end()};
  const bool ok = EVP_KDF_derive(ctx, out.data(), out.size(), params) == 1;
  EVP_KDF_CTX_free(ctx);
  return ok;
}

bool tls13_traffic_keys(tls_direction_keys& keys) {
  const auto secret = std::span(keys.secret).first(keys.secret_length);
  keys.sequence = 0;
  return tls13_expand_label(secret, "key", std::span(keys.key).first(keys.key_length)) &&
         tls13_expand_label(secret, "iv", keys.iv);
}

void tls_records::seal(tls_content type, std::span<const std::uint8_t> plain,
                       std::vector<std::uint8_t>& out) {
  do {
    const std::span<const std::uint8_t> part = plain.first(std::min(plain.size(), max_plaintext));
    plain = plain.subspan(part.size());
    const bool v12 = version_ == tls_version::tls12;
    // TLS 1.3 hides the type inside (RFC 8446 5.2): content, type byte, no padding.
    const std::size_t inner = part.size() + (v12 ? 0 : 1);
    const std::size_t body = (v12 ? explicit_nonce_size : 0) + inner + tag_size;
    const std::size_t at = out.size();
    out.resize(at + header_size + body);
    std::uint8_t* header = out.data() + at;
    header[0] = static_cast<std::uint8_t>(v12 ? type : tls_content::application_data);
    header[1] = 3;
    header[2] = 3;
    put_u16(header + 3, body);
    std::uint8_t* payload = header + header_size;
    if (v12) {
      put_u64(payload, write_.sequence);
      payload += explicit_nonce_size;
    }
    if (!part.empty()) std::memcpy(payload, part.data(), part.size());
    if (!v12) payload[part.size()] = static_cast<std::uint8_t>(type);
    std::array<std::uint8_t, 13> aad12{};
    std::span<const std::uint8_t> aad(header, header_size);
    if (v12) {
      put_u64(aad12.data(), write_.sequence);
      aad12[8] = static_cast<std::uint8_t>(type);
      aad12[9] = 3;
      aad12[10] = 3;
      put_u16(aad12.data() + 11, part.size());
      aad = aad12;
    }
    const auto nonce = nonce_of(version_, write_, header + header_size);
    // A failure here is OpenSSL out of memory; the record goes out with a zero tag
    // and the peer refuses it, which ends the session as it should.
    (void)gcm(write_, true, nonce, aad, std::span(payload, inner), payload + inner);
    ++write_.sequence;
  } while (!plain.empty());
}

tls_opened tls_records::open(std::span<std::uint8_t> record) {
  tls_opened r;
  const bool v12 = version_ == tls_version::tls12;
  const std::size_t overhead = (v12 ? explicit_nonce_size : 0) + tag_size;
  if (record.size() < header_size + overhead) {
    r.error = "record too short for its protection";
    return r;
  }
  const auto outer = static_cast<tls_content>(record[0]);
  if (!v12 && outer != tls_content::application_data) {
    r.error = "unprotected record after the handshake";
    return r;
  }
  std::uint8_t* payload = record.data() + header_size;
  const std::size_t body = record.size() - header_size;
  const std::size_t inner = body - overhead;
  std::uint8_t* ciphertext = payload + (v12 ? explicit_nonce_size : 0);
  std::array<std::uint8_t, 13> aad12{};
  std::span<const std::uint8_t> aad(record.data(), header_size);
  if (v12) {
    put_u64(aad12.data(), read_.sequence);
    aad12[8] = record[0];
    aad12[9] = record[1];
    aad12[10] = record[2];
    put_u16(aad12.data() + 11, inner);
    aad = aad12;
  }
  const auto nonce = nonce_of(version_, read_, payload);
  if (!gcm(read_, false, nonce, aad, std::span(ciphertext, inner), ciphertext + inner)) {
    r.error = "bad record MAC";
    return r;
  }
  ++read_.sequence;
  std::size_t length = inner;
  r.type = outer;
  if (!v12) {
    // The last non-zero byte is the true type; zeros after it are padding.
    while (length > 0 && ciphertext[length - 1] == 0) --length;
    if (length == 0) {
      r.error = "record without a content type";
      return r;
    }
    --length;
    r.type = static_cast<tls_content>(ciphertext[length]);
  }
  if (length > max_plaintext) {
    r.error = "record overflow";
    return r;
  }
  r.ok = true;
  r.plaintext = std::span(ciphertext, length);
  return r;
}

namespace {

constexpr std::uint8_t handshake_new_session_ticket = 4;
constexpr std::uint8_t handshake_key_update = 24;
constexpr std::uint8_t alert_close_notify = 0;
constexpr std::uint8_t alert_level_warning = 1;

bool next_generation(tls_direction_keys& keys) {
  // RFC 8446 7.2: application_traffic_secret_N+1 = HKDF-Expand-Label(secret_N,
  // "traffic upd", "", Hash.length).
  std::array<std::uint8_t, 48> next{};
  const auto out = std::span(next).first(keys.secret_length);
  if (!tls13_expand_label(std::span(keys.secret).first(keys.secret_length), "traffic upd", out))
    return false;
  keys.secret = next;
  return tls13_traffic_keys(keys);
}

}  // namespace

tls_received tls_records::receive(std::span<std::uint8_t> buffer, bool server,
                                  std::vector<std::uint8_t>& replies) {
  tls_received out;
  std::size_t& plain = out.plain;
  std::size_t& used = out.used;
  std::string& error = out.error;
  while (!out.closed && buffer.size() - used >= header_size) {
    const std::uint8_t* header = buffer.data() + used;
    const std::size_t body = (std::size_t{header[3]} << 8) | header[4];
    if (body > max_body) {
      error = "record overflow (" + std::to_string(body) + " bytes)";
      return out;
    }
    if (buffer.size() - used < header_size + body) break;
    const tls_opened r = open(buffer.subspan(used, header_size + body));
    used += header_size + body;
    if (!r.ok) {
      error = r.error;
      return out;
    }
    switch (r.type) {
      case tls_content::application_data:
        // Moved down over the headers and tags of the records before it.
        std::memmove(buffer.data() + plain, r.plaintext.data(), r.plaintext.size());
        plain += r.plaintext.size();
        break;
      case tls_content::alert:
        if (r.plaintext.size() != 2) {
          error = "malformed alert";
          return out;
        }
        if (r.plaintext[1] == alert_close_notify) {
          out.closed = true;
        } else if (!(r.plaintext[0] == alert_level_warning && version_ == tls_version::tls12)) {
          error = "alert " + std::to_string(r.plaintext[1]) + " from the peer";
          return out;
        }
        break;
      case tls_content::handshake:
        if (!post_handshake(r.plaintext, server, replies, error)) return out;
        break;
      default:
        error = "unexpected record type " + std::to_string(static_cast<int>(r.type));
        return out;
    }
  }
  return out;
}

// Messages after the handshake. TLS 1.2: any is a renegotiation, refused. TLS 1.3:
// KeyUpdate moves the keys on (and, when asked, ours too); a client ignores session
// tickets (the simulator does not resume). A message split over records is refused:
// the stacks seen send each of these whole.
bool tls_records::post_handshake(std::span<const std::uint8_t> messages, bool server,
                                 std::vector<std::uint8_t>& replies, std::string& error) {
  if (version_ == tls_version::tls12) {
    error = server ? "renegotiation refused" : "unexpected handshake message";
    return false;
  }
  while (!messages.empty()) {
    if (messages.size() < 4) {
      error = "handshake message split over records";
      return false;
    }
    const std::size_t length =
        (std::size_t{messages[1]} << 16) | (std::size_t{messages[2]} << 8) | messages[3];
    if (messages.size() < 4 + length) {
      error = "handshake message split over records";
      return false;
    }
    const std::uint8_t type = messages[0];
    const auto body = messages.subspan(4, length);
    messages = messages.subspan(4 + length);
    if (type == handshake_new_session_ticket && !server) continue;
    if (type != handshake_key_update || body.size() != 1 || body[0] > 1) {
      error = "unexpected handshake message " + std::to_string(type) + " after the handshake";
      return false;
    }
    if (!update_read_keys()) {
      error = "key update failed";
      return false;
    }
    if (body[0] == 1) {
      // update_requested: answer under the old keys, then move ours on.
      static constexpr std::uint8_t not_requested[] = {handshake_key_update, 0, 0, 1, 0};
      seal(tls_content::handshake, not_requested, replies);
      if (!update_write_keys()) {
        error = "key update failed";
        return false;
      }
    }
  }
  return true;
}

bool tls_records::update_read_keys() {
  return next_generation(read_);
}

bool tls_records::update_write_keys() {
  return next_generation(write_);
}

}  // namespace tgw::infra::net
