#include "infra/net/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <fstream>

namespace tgw::infra::net {
namespace {

// OpenSSL's error queue, oldest first, as one line; empties the queue.
std::string openssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

bool readable(const std::string& path) {
  return std::ifstream(path).good();
}

// A key anyone on the host can read is a key anyone on the host has: said at start and
// at every reload, with the fix.
std::string key_file_exposure(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  const auto others = st.st_mode & (S_IRWXG | S_IRWXO);
  if (others == 0) return {};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "--tls-key " + path + " may be read by " +
         ((st.st_mode & S_IRWXO) != 0 ? std::string("anyone on the host") : "its group") +
         " (mode " + mode + "): chmod 600 " + path + ", owned by the user tgw runs as";
}

std::string name_of(const X509_NAME* name) {
  char buf[256] = {};
  if (X509_NAME_oneline(name, buf, sizeof buf) == nullptr) {
    ERR_clear_error();
    return "(unreadable name)";
  }
  return buf;
}

// Empty if OpenSSL cannot digest the certificate.
std::string sha256_fingerprint(const X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (X509_digest(cert, EVP_sha256(), md, &n) != 1) return {};
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    if (i > 0) out += ':';
    out += digits[md[i] >> 4];
    out += digits[md[i] & 0xF];
  }
  return out;
}

std::string utc_text(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::shared_ptr<const tls_server_context> tls_server_context::load(const tls_settings& settings,
                                                                   std::string& error) {
  ERR_clear_error();
  // Checked first: OpenSSL's own message for a missing file names no file.
  for (const auto& [flag, path] :
       {std::pair{"--tls-cert", settings.cert_file}, std::pair{"--tls-key", settings.key_file}}) {
    if (path.empty()) {
      error = std::string(flag) + " is required for TLS";
      return nullptr;
    }
    if (!readable(path)) {
      error = std::string(flag) + " " + path + ": cannot read the file";
      return nullptr;
    }
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    error = "cannot create a TLS context: " + openssl_errors();
    return nullptr;
  }
  std::shared_ptr<tls_server_context> out(new tls_server_context(ctx));
  // TLS 1.2 is what the devices speak (Teltonika documents 1.1 and 1.2; 1.1 is
  // deprecated by RFC 8996 and refused); 1.3 for everything newer.
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1) {
    error = "cannot limit TLS to versions 1.2 and 1.3: " + openssl_errors();
    return nullptr;
  }
  // No renegotiation (a client could make the server redo the expensive part at
  // will); compression off (CRIME). A device that loses power or coverage closes
  // without close_notify: that is an ordinary close here, not a protocol error.
  // (SSL_CTX_set_options and _set_mode return the options now in force; they cannot
  // fail.)
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_IGNORE_UNEXPECTED_EOF);
  // RELEASE_BUFFERS: a session gives its 16 KiB read and write buffers back whenever
  // they are empty, so an idle device holds none (docs/PERFORMANCE.md, "What an idle
  // TLS session holds").
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Read ahead: one recv takes whatever the socket holds (a packet's records and
  // more), rather than a 5-byte header and then the record, two syscalls each.
  SSL_CTX_set_read_ahead(ctx, 1);
  // Resumption by session ticket only (stateless): a server-side session cache would
  // hold a session per connection, up to 20,000 of them, for devices that reconnect
  // rarely. One ticket, not OpenSSL's two: every handshake writes one record less.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  static const unsigned char session_context[] = "tgw-device-port";
  if (SSL_CTX_set_num_tickets(ctx, 1) != 1 ||
      SSL_CTX_set_session_id_context(ctx, session_context, sizeof session_context - 1) != 1) {
    error = "cannot set up TLS session resumption: " + openssl_errors();
    return nullptr;
  }

  if (SSL_CTX_set_cipher_list(ctx, settings.ciphers.c_str()) != 1) {
    error =
        "--tls-ciphers '" + settings.ciphers + "': no cipher OpenSSL knows: " + openssl_errors();
    return nullptr;
  }
  if (SSL_CTX_use_certificate_chain_file(ctx, settings.cert_file.c_str()) != 1) {
    error = "--tls-cert " + settings.cert_file + ": not a PEM certificate: " + openssl_errors();
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, settings.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    const std::string why = openssl_errors();
    error = why.find("key values mismatch") != std::string::npos
                ? "--tls-key " + settings.key_file + " does not belong to the certificate in " +
                      settings.cert_file
                : "--tls-key " + settings.key_file + ": not a PEM private key: " + why;
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    error = "--tls-key " + settings.key_file + " does not belong to the certificate in " +
            settings.cert_file;
    ERR_clear_error();
    return nullptr;
  }
  if (!settings.client_ca_file.empty()) {
    if (!readable(settings.client_ca_file) ||
        SSL_CTX_load_verify_locations(ctx, settings.client_ca_file.c_str(), nullptr) != 1) {
      error = "--tls-client-ca " + settings.client_ca_file +
              ": cannot load PEM certificates: " + openssl_errors();
      return nullptr;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }

  const X509* cert = SSL_CTX_get0_certificate(ctx);
  if (cert == nullptr) {
    error = "--tls-cert " + settings.cert_file + ": no certificate loaded";
    return nullptr;
  }
  std::tm not_after{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &not_after) != 1) {
    error = "--tls-cert " + settings.cert_file + ": unreadable expiry date: " + openssl_errors();
    return nullptr;
  }
  out->not_after_ = std::chrono::system_clock::from_time_t(timegm(&not_after));
  out->fingerprint_ = sha256_fingerprint(cert);
  if (out->fingerprint_.empty()) {
    error = "--tls-cert " + settings.cert_file + ": cannot digest it: " + openssl_errors();
    return nullptr;
  }
  out->warning_ = key_file_exposure(settings.key_file);
  out->description_ = "subject " + name_of(X509_get_subject_name(cert)) + ", issuer " +
                      name_of(X509_get_issuer_name(cert)) + ", valid until " +
                      utc_text(out->not_after_) + ", SHA-256 " + out->fingerprint_;
  const auto now = std::chrono::system_clock::now();
  if (out->not_after_ < now)
    out->description_ += " (EXPIRED: devices that check it will refuse the gateway)";
  else if (out->not_after_ - now < std::chrono::hours{24 * 14})
    out->description_ += " (expires in less than 14 days)";
  return out;
}

tls_server_context::~tls_server_context() {
  SSL_CTX_free(ctx_);
}

tls_context_source::tls_context_source(tls_settings settings,
                                       std::shared_ptr<const tls_server_context> first)
    : settings_(std::move(settings)), current_(std::move(first)) {}

std::shared_ptr<const tls_server_context> tls_context_source::current() const {
  const std::lock_guard lock(mutex_);
  return current_;
}

bool tls_context_source::reload(std::string& report) {
  std::string error;
  auto next = tls_server_context::load(settings_, error);
  const auto before = current();
  if (!next) {
    report = error + "; the certificate in force stays (" + before->description() + ")";
    return false;
  }
  report =
      next->fingerprint() == before->fingerprint()
          ? "certificate unchanged (" + next->description() + ")"
          : "certificate replaced: was " + before->description() + ", now " + next->description();
  const std::lock_guard lock(mutex_);
  current_ = std::move(next);
  return true;
}

}  // namespace tgw::infra::net
