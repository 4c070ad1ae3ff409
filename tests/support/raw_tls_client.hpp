#pragma once

// TLS clients for tests that send what no TLS library would: a TLS 1.3 client that
// seals its own records (KeyUpdate floods, empty records, warning alerts, tampered
// records), and the bytes of a ClientHello for clients that never finish one.
// OpenSSL makes the handshake and reads what the gateway sends; only the records to
// the gateway are made here, with the session's own keys.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

// OpenSSL's own types, declared so that this header does not pull in <openssl/ssl.h>.
struct ssl_st;
struct ssl_ctx_st;

namespace tgw::test {

/// TLS record content types and alert descriptions (RFC 8446 5.1, 6).
namespace tls_wire {
inline constexpr std::uint8_t change_cipher_spec = 20;
inline constexpr std::uint8_t alert = 21;
inline constexpr std::uint8_t handshake = 22;
inline constexpr std::uint8_t application_data = 23;

inline constexpr int unexpected_message = 10;
inline constexpr int bad_record_mac = 20;
inline constexpr int record_overflow = 22;
inline constexpr int user_canceled = 90;
}  // namespace tls_wire

/// An alert the gateway sent, as the client's OpenSSL read it.
struct tls_alert {
  int level = 0;  ///< 1 warning, 2 fatal.
  int description = -1;
};

/// The first flight of a TLS client (its ClientHello record), made by OpenSSL into
/// memory and never sent by it: for tests that send it themselves, slowly or not whole.
std::vector<std::uint8_t> client_hello_bytes();

/// A TLS 1.3 client (TLS_AES_128_GCM_SHA256) on one blocking TCP connection to the
/// loopback. The handshake is OpenSSL's; its client application traffic secret comes
/// from OpenSSL's key log callback, and HKDF-Expand-Label (RFC 8446 7.1, EVP_KDF
/// "HKDF") gives the key and IV that seal() uses with EVP's AES-128-GCM (5.2, 5.3).
class raw_tls13_client {
 public:
  /// Connects and handshakes; `proxy_header` goes first, in plain, as a balancer's.
  explicit raw_tls13_client(std::uint16_t port, const std::string& proxy_header = {});
  ~raw_tls13_client();
  raw_tls13_client(const raw_tls13_client&) = delete;
  raw_tls13_client& operator=(const raw_tls13_client&) = delete;

  [[nodiscard]] bool established() const { return established_; }
  [[nodiscard]] const std::string& error() const { return error_; }

  /// One record on the wire: `content` followed by the inner content type `type`,
  /// sealed under the current write key with the next sequence number.
  std::vector<std::uint8_t> seal(std::uint8_t type, std::span<const std::uint8_t> content);
  /// `count` KeyUpdate messages (RFC 8446 4.6.3), to be sealed as one handshake record;
  /// the write key moves on by `count` once that record is sealed (key_updated()).
  static std::vector<std::uint8_t> key_updates(int count, bool update_requested);
  /// After sealing a record of KeyUpdates: the next traffic secret, key and IV, and
  /// the sequence number back to 0 (RFC 8446 7.2).
  void key_updated();

  enum class sent : std::uint8_t { all, closed, blocked };
  /// Writes `wire` to the socket as it is. closed: the gateway closed or reset the
  /// connection; blocked: it stopped reading, and a send waited past the send timeout.
  sent send_raw(std::span<const std::uint8_t> wire);
  /// A send that blocks longer than this fails (floods that the gateway throttles).
  void set_send_timeout(std::chrono::milliseconds timeout);
  /// Application data from the gateway, exactly `n` bytes, through OpenSSL; nullopt on
  /// a timeout (2 s), a close or an alert.
  std::optional<std::vector<std::uint8_t>> receive(std::size_t n);
  /// Reads until the gateway ends the session (or 2 s pass): the last alert it sent,
  /// or nullopt if none came (a close without one, or a timeout).
  std::optional<tls_alert> alert_at_end();
  /// Whether the gateway closed the TCP connection (a read returns its end) within 2 s.
  [[nodiscard]] bool closed_by_server();

 private:
  static void on_key_log(const ssl_st* ssl, const char* line);
  static void on_info(const ssl_st* ssl, int where, int ret);
  void derive_write_key();

  ssl_ctx_st* ctx_ = nullptr;
  ssl_st* ssl_ = nullptr;
  int fd_ = -1;
  bool established_ = false;
  std::string error_;
  std::vector<std::uint8_t> secret_;  ///< The client application traffic secret in force.
  std::vector<std::uint8_t> key_;
  std::vector<std::uint8_t> iv_;
  std::uint64_t sequence_ = 0;
  std::optional<tls_alert> last_alert_;
};

}  // namespace tgw::test
