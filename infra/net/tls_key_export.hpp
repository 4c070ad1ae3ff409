#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "infra/net/tls_records.hpp"

// OpenSSL's own types, declared so that this header does not pull in <openssl/ssl.h>.
struct ssl_st;
struct ssl_ctx_st;

namespace tgw::infra::net {

/// What OpenSSL tells only while the handshake runs: the TLS 1.3 application traffic
/// secrets (through its key log, the one way OpenSSL 3.0 hands them out) and how many
/// records this side sent under them before the handshake returned (session tickets).
/// Lives from SSL_new to the end of the handshake, then is wiped.
struct tls_handshake_secrets {
  std::array<std::uint8_t, 48> client_traffic{};
  std::array<std::uint8_t, 48> server_traffic{};
  std::uint8_t client_length = 0;
  std::uint8_t server_length = 0;
  std::uint8_t tickets_written = 0;

  ~tls_handshake_secrets();
};

/// Makes every session of `ctx` report its TLS 1.3 traffic secrets to the
/// tls_handshake_secrets attached to it (sessions without one are unaffected).
/// Called once per context, before it is shared.
void capture_traffic_secrets(ssl_ctx_st* ctx);

/// Attaches `secrets` to a session before its handshake starts, and turns OpenSSL's
/// read-ahead off for the handshake: the bytes after the peer's last handshake record
/// must stay in the socket for the record layer that takes over.
void attach_secrets(ssl_st* ssl, tls_handshake_secrets* secrets);

/// The record layer that continues a finished handshake on `ssl` (TLS 1.2 or 1.3 with
/// AES-128-GCM or AES-256-GCM), or null with `why` set: another cipher or version,
/// secrets missing, or OpenSSL holding bytes it already read. The session itself
/// stays usable through OpenSSL in that case.
std::unique_ptr<tls_records> export_records(ssl_st* ssl, bool server,
                                            const tls_handshake_secrets& secrets, std::string& why);

}  // namespace tgw::infra::net
