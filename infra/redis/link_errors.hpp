#pragma once

#include <string_view>

namespace tgw::infra::redis::link_errors {

/// Phrases a server link puts in its error texts (transport failures, open()'s error) when
/// it knows why a connection failed; infra/redis/failure_cause names the fix for each.
/// Kept in one place so that the words written and the words looked for cannot drift.

/// TCP: nothing listens (the system's own words), or no answer to the connect at all.
inline constexpr std::string_view refused = "Connection refused";
inline constexpr std::string_view connect_timeout = "no answer to the connection within";
/// The server took the connection, then sent nothing back: paused (SIGSTOP), overloaded,
/// or not a Redis server.
inline constexpr std::string_view silent = "sent no reply within";
/// The server stopped reading what was written to it.
inline constexpr std::string_view no_bytes_taken = "took no bytes for";
/// A plain connection closed before any reply: typically a TLS-only port.
inline constexpr std::string_view closed_before_reply = "closed the connection before any reply";
/// A plain connection got TLS bytes back.
inline constexpr std::string_view tls_bytes = "answered with TLS records";

/// TLS: the server's certificate.
inline constexpr std::string_view tls_untrusted = "certificate is not signed by a trusted CA";
inline constexpr std::string_view tls_expired = "certificate has expired";
inline constexpr std::string_view tls_not_yet_valid = "certificate is not valid yet";
inline constexpr std::string_view tls_name_mismatch = "certificate does not name";
inline constexpr std::string_view tls_refused_certificate = "certificate was refused";
/// TLS: the server is not speaking TLS (a plain port), or not answering the handshake.
inline constexpr std::string_view tls_not_tls = "did not answer the TLS handshake with TLS";
inline constexpr std::string_view tls_handshake_silent = "no answer to the TLS handshake within";
/// TLS: the server wants a client certificate, or refused ours.
inline constexpr std::string_view tls_client_certificate_required = "requires a client certificate";
inline constexpr std::string_view tls_client_certificate_refused = "refused the client certificate";
/// TLS: our own files (--redis-tls-ca, --redis-tls-cert, --redis-tls-key).
inline constexpr std::string_view tls_local_files = "TLS set-up:";

/// Redis' own refusals while a link logs in.
inline constexpr std::string_view auth_refused = "AUTH refused";
inline constexpr std::string_view auth_missing = "asks for a password";
inline constexpr std::string_view database_refused = "SELECT refused";
inline constexpr std::string_view select_on_cluster = "is a Redis Cluster node";

/// Sentinel mode: the addresses are not sentinels, or none knows the master's name.
inline constexpr std::string_view not_a_sentinel = "is not a Sentinel";
inline constexpr std::string_view unknown_master = "no sentinel knows master";
inline constexpr std::string_view no_sentinel = "no sentinel reachable";

}  // namespace tgw::infra::redis::link_errors
