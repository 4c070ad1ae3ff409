// Fuzzes what the TLS record layer makes of the bytes a peer sends after the
// handshake. The input is a script: a header byte (TLS version, AES key size, which
// side we are), then operations, each a kind byte, a length byte and that many
// bytes: application data, an alert or a handshake message sealed as the peer would
// seal it, bytes sent without protection, or a cut (the records so far arrive in
// pieces of a given size). Oracles: receive() never reads past its buffer; it gives
// only application bytes the peer sealed, in order, whatever else came; a session of
// application data and well-formed KeyUpdates only is read back exactly, whatever the
// cuts.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "infra/net/tls_records.hpp"

namespace {

using namespace tgw::infra::net;

inline void require(bool condition) noexcept {
  if (!condition) __builtin_trap();
}

tls_direction_keys keys_for(tls_version version, std::uint8_t key_length, std::uint8_t salt) {
  tls_direction_keys k;
  k.key_length = key_length;
  for (std::size_t i = 0; i < k.key.size(); ++i) k.key[i] = static_cast<std::uint8_t>(i + salt);
  for (std::size_t i = 0; i < k.iv.size(); ++i) k.iv[i] = static_cast<std::uint8_t>(3 * i + salt);
  if (version == tls_version::tls13) {
    k.secret_length = key_length == 32 ? 48 : 32;
    for (std::size_t i = 0; i < k.secret.size(); ++i)
      k.secret[i] = static_cast<std::uint8_t>(7 * i + salt);
    require(tls13_traffic_keys(k));
  } else {
    k.sequence = 1;
  }
  return k;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t header = data[0];
  const tls_version version = (header & 1) != 0 ? tls_version::tls13 : tls_version::tls12;
  const std::uint8_t key_length = (header & 2) != 0 ? 32 : 16;
  const bool server = (header & 4) != 0;
  const tls_direction_keys theirs = keys_for(version, key_length, 1);
  const tls_direction_keys ours = keys_for(version, key_length, 101);
  tls_records peer(version, ours, theirs);  // seals with theirs
  tls_records me(version, theirs, ours);    // opens with theirs

  std::vector<std::uint8_t> wire;
  std::vector<std::uint8_t> expected;
  bool clean = true;  // only application data and well-formed KeyUpdates so far
  std::size_t cut = 0;
  std::size_t at = 1;
  while (at + 2 <= size) {
    const std::uint8_t kind = data[at] % 5;
    const std::size_t length = data[at + 1];
    at += 2;
    const std::span<const std::uint8_t> body(data + at, std::min(length, size - at));
    at += body.size();
    switch (kind) {
      case 0:
        peer.seal(tls_content::application_data, body, wire);
        expected.insert(expected.end(), body.begin(), body.end());
        break;
      case 1:
        peer.seal(tls_content::alert, body, wire);
        clean = false;
        break;
      case 2: {
        peer.seal(tls_content::handshake, body, wire);
        const bool key_update = version == tls_version::tls13 && body.size() == 5 &&
                                body[0] == 24 && body[1] == 0 && body[2] == 0 && body[3] == 1 &&
                                body[4] <= 1;
        // A peer that sent a KeyUpdate seals on with its next keys.
        if (key_update)
          require(peer.update_write_keys());
        else
          clean = false;
        break;
      }
      case 3:
        wire.insert(wire.end(), body.begin(), body.end());
        if (!body.empty()) clean = false;
        break;
      default:
        cut = body.empty() ? 0 : body[0];
        break;
    }
  }

  // Arrives in pieces of `cut` bytes (0: all at once), as recv would deliver it.
  std::vector<std::uint8_t> buffer;
  std::vector<std::uint8_t> got;
  std::vector<std::uint8_t> replies;
  bool failed = false;
  bool closed = false;
  std::size_t sent = 0;
  while (sent < wire.size() && !failed && !closed) {
    const std::size_t piece = cut == 0 ? wire.size() - sent : std::min(cut, wire.size() - sent);
    buffer.insert(buffer.end(), wire.begin() + static_cast<std::ptrdiff_t>(sent),
                  wire.begin() + static_cast<std::ptrdiff_t>(sent + piece));
    sent += piece;
    const tls_received r = me.receive(buffer, server, replies);
    require(r.used <= buffer.size());
    require(r.plain <= r.used);
    if (!r.error.empty()) {
      failed = true;
      break;
    }
    got.insert(got.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(r.plain));
    buffer.erase(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(r.used));
    closed = r.closed;
  }
  // Authenticity: whatever came, only bytes the peer sealed are read, in order.
  require(got.size() <= expected.size() && std::equal(got.begin(), got.end(), expected.begin()));
  if (clean) {
    require(!failed && !closed);
    require(buffer.empty());
    require(got == expected);
  }
  return 0;
}
