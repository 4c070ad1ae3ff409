#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tgw::infra::net {

/// TLS record content types (RFC 8446 5.1, RFC 5246 6.2.1).
enum class tls_content : std::uint8_t {
  change_cipher_spec = 20,
  alert = 21,
  handshake = 22,
  application_data = 23
};

enum class tls_version : std::uint8_t { tls12, tls13 };

/// The keys of one direction of an established AES-GCM session.
struct tls_direction_keys {
  std::array<std::uint8_t, 32> key{};
  std::uint8_t key_length = 0;  ///< 16 (AES-128-GCM) or 32 (AES-256-GCM).
  /// TLS 1.2: the 4-byte implicit salt; TLS 1.3: the 12-byte per-record IV base.
  std::array<std::uint8_t, 12> iv{};
  std::uint64_t sequence = 0;  ///< Of the next record.
  /// TLS 1.3 only: the traffic secret, from which a KeyUpdate derives the next keys.
  std::array<std::uint8_t, 48> secret{};
  /// 32 (SHA-256 suites) or 48 (SHA-384): also names the hash KeyUpdate uses.
  std::uint8_t secret_length = 0;
};

/// HKDF-Expand-Label (RFC 8446 7.1) with an empty context, over SHA-256 when the
/// secret is 32 bytes and SHA-384 when it is 48. False if OpenSSL refused.
bool tls13_expand_label(std::span<const std::uint8_t> secret, std::string_view label,
                        std::span<std::uint8_t> out);

/// The key and IV of a TLS 1.3 traffic secret (RFC 8446 7.3), sequence 0.
bool tls13_traffic_keys(tls_direction_keys& keys);

/// What opening one record gave.
struct tls_opened {
  bool ok = false;
  tls_content type = tls_content::application_data;
  std::span<std::uint8_t> plaintext;  ///< Inside the record's own bytes (decrypted in place).
  const char* error = nullptr;        ///< When !ok: what was wrong.
};

/// What receive() made of the whole records at the front of a buffer.
struct tls_received {
  std::size_t plain = 0;  ///< Application bytes, moved to the buffer's start.
  std::size_t used = 0;   ///< Bytes of the buffer the opened records took.
  bool closed = false;    ///< close_notify came; nothing after it was read.
  std::string error;      ///< Set on a fault: the session is over.
};

/// The record protection of an established TLS 1.2 or 1.3 session with an AES-GCM
/// cipher (RFC 5288 / RFC 8446 5.2-5.3), after OpenSSL did the handshake and handed
/// over the keys. A session kept in OpenSSL holds about 14 KiB for its whole life (the
/// SSL object's record arrays for 32 pipelines, the handshake's leftovers, two cipher
/// contexts); this holds the raw keys and sequence numbers, about 250 bytes, and keys
/// a per-thread cipher context for each record instead. The cipher itself stays
/// OpenSSL's (EVP, AES-NI); only the record framing, nonces and additional data are
/// done here, which is the part kernel TLS does too.
/// Pure: bytes in, bytes out; not thread-safe (one connection's io thread).
class tls_records {
 public:
  /// Largest plaintext in one record (2^14), and the largest protected record body
  /// a peer may send (RFC 8446 5.2: 2^14 + 256).
  static constexpr std::size_t max_plaintext = 16384;
  static constexpr std::size_t max_body = max_plaintext + 256;
  static constexpr std::size_t header_size = 5;

  tls_records(tls_version version, const tls_direction_keys& read, const tls_direction_keys& write)
      : version_(version), read_(read), write_(write) {}

  /// Appends records carrying `plain` (split at max_plaintext) to `out`.
  void seal(tls_content type, std::span<const std::uint8_t> plain, std::vector<std::uint8_t>& out);
  /// Opens one whole record (header included) in place.
  tls_opened open(std::span<std::uint8_t> record);

  /// Opens the whole records at the front of `buffer` in place and acts on what they
  /// carry: application bytes are gathered at the buffer's start; close_notify ends
  /// reading; a TLS 1.3 KeyUpdate moves the read keys on (and, when the peer asks,
  /// appends our KeyUpdate to `replies` and moves the write keys on); a client skips
  /// TLS 1.3 session tickets. Refused: renegotiation (any TLS 1.2 handshake message),
  /// other alerts, a handshake message split over records, and anything malformed.
  /// A partial record at the end is left for the next call (`used` stops before it).
  tls_received receive(std::span<std::uint8_t> buffer, bool server,
                       std::vector<std::uint8_t>& replies);

  /// TLS 1.3 KeyUpdate: the next traffic secret of a direction, its keys, sequence 0.
  /// False if the key derivation failed.
  bool update_read_keys();
  bool update_write_keys();

  [[nodiscard]] tls_version version() const { return version_; }

 private:
  bool post_handshake(std::span<const std::uint8_t> messages, bool server,
                      std::vector<std::uint8_t>& replies, std::string& error);

  tls_version version_;
  tls_direction_keys read_;
  tls_direction_keys write_;
};

}  // namespace tgw::infra::net
