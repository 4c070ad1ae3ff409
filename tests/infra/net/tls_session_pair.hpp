#pragma once

// What the tls_channel tests share: a tls_channel server and an OpenSSL client on the
// two ends of a non-blocking socket pair, the certificate they use, and the bytes and
// records the tests send through them.
#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infra/net/tls_channel.hpp"
#include "infra/net/tls_context.hpp"
#include "tests/support/tls_device.hpp"

namespace tgw::infra::net::tls_test {

std::vector<std::uint8_t> bytes_of(const std::string& s);
/// `n` bytes of a fixed pattern.
std::vector<std::uint8_t> pattern(std::size_t n);
/// Waits up to 20 ms for `fd` to be readable.
void wait_readable(int fd);

// Loops that wait for the peer give up after this many waits (about 2 s), so that a
// broken session fails its test rather than hanging it.
constexpr int patience = 100;

/// The certificate files, made once for the whole binary.
const test::pem_files& server_certificate();

struct peer_choice {
  int version = TLS1_3_VERSION;
  std::string cipher;  ///< TLS 1.2 cipher list or TLS 1.3 suite; empty: the default.
};

/// An OpenSSL client and a tls_channel server on the two ends of a socket pair.
class session_pair {
 public:
  explicit session_pair(const peer_choice& choice);
  ~session_pair();
  session_pair(const session_pair&) = delete;
  session_pair& operator=(const session_pair&) = delete;

  /// Both handshakes, alternating; false if either failed.
  bool handshake();
  /// The client writes `b` whole (OpenSSL: one record per 16 KiB).
  void client_send(const std::vector<std::uint8_t>& b);
  /// What the server reads until it has `n` bytes, or a failure or close.
  std::vector<std::uint8_t> server_receive(std::size_t n, tls_status* last = nullptr,
                                           std::string* error = nullptr);
  /// The server writes `b`, repeating with the same bytes while the socket is full.
  void server_send(const std::vector<std::uint8_t>& b);
  std::vector<std::uint8_t> client_receive(std::size_t n);
  /// The client's last SSL_read outcome on a closed or failed session.
  int client_read_error();
  /// Sends raw bytes to the server as if from the client.
  void raw_to_server(std::span<const std::uint8_t> b);
  /// Makes the client write its records into memory rather than the socket, so that
  /// a test can cut or alter them before they go.
  BIO* capture_client_records();
  void close_client_socket();

  tls_channel& server() { return *server_; }
  [[nodiscard]] int server_fd() const { return server_fd_; }
  SSL* client() { return client_; }

 private:
  void drain_server_into(std::vector<std::uint8_t>& into);
  void drain_client_into(std::vector<std::uint8_t>& into);

  std::shared_ptr<const tls_server_context> context_;
  std::unique_ptr<tls_channel> server_;
  SSL_CTX* client_ctx_ = nullptr;
  SSL* client_ = nullptr;
  int server_fd_ = -1;
  int client_fd_ = -1;
  std::vector<std::uint8_t> pending_;
  std::vector<std::uint8_t> client_pending_;
};

/// The bytes a memory BIO holds.
std::vector<std::uint8_t> mem_bytes(BIO* mem);
/// The records the client seals for `messages`, one SSL_write each, caught before
/// they reach the socket.
std::vector<std::uint8_t> client_records(session_pair& pair,
                                         std::initializer_list<std::vector<std::uint8_t>> messages);
/// One server read; its bytes are appended to `got`. False on anything but bytes or
/// a wait for more.
bool read_into(tls_channel& server, std::vector<std::uint8_t>& got, std::string& error);
std::vector<std::uint8_t> joined(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b);

}  // namespace tgw::infra::net::tls_test
