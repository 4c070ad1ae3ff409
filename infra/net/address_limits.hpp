#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "actors/domain/token_bucket.hpp"
#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::net {

/// Per source address: how many new connections a second, how many may be in their
/// handshake (PROXY header, TLS, IMEI) at once, how many identified sessions it may
/// hold, and how many devices unknown to the instance's Redis it may bring in. 0
/// turns a limit off.
struct address_limit_settings {
  double connections_per_second = 0;
  /// Connections allowed at once after a quiet spell; at least 1 when the rate is on.
  double burst = 0;
  std::size_t handshakes = 0;
  /// IPv6 sources are counted per prefix of this many bits: a single host is commonly
  /// given a whole /64, so counting per /128 would give it 2^64 quotas.
  unsigned ipv6_prefix = 64;
  std::size_t sessions = 0;
  /// New devices (IMEIs with no state in Redis yet) per hour, and after a quiet spell.
  double new_devices_per_hour = 0;
  double new_devices_burst = 0;
};

enum class address_verdict : std::uint8_t { admitted, over_rate, over_handshakes };

/// Keeps one address from exhausting the instance: a token bucket for the connection
/// rate and a count of unfinished handshakes, per address, shared by every listener.
/// Consulted once per connection (not per packet), under one mutex. Entries of quiet
/// addresses are dropped as the table grows, so it holds only recent sources.
class address_limits {
 public:
  explicit address_limits(address_limit_settings settings);

  /// The key an address is counted under: an IPv4 address (IPv4-mapped IPv6 taken as
  /// the IPv4 address it carries) alone, an IPv6 address by its prefix.
  [[nodiscard]] std::string key_of(const ip_endpoint& address) const;
  /// What that key stands for, for logs: "198.51.100.7", "2001:db8:0:1::/64".
  [[nodiscard]] std::string describe(const ip_endpoint& address) const;

  /// On admission the address holds one handshake until handshake_over().
  address_verdict admit(const std::string& address, std::chrono::steady_clock::time_point now =
                                                        std::chrono::steady_clock::now());
  void handshake_over(const std::string& address);
  /// An identified session of the address begins: false (and nothing held) when the
  /// address holds its limit of sessions already. Otherwise it holds one until
  /// session_over().
  bool session_begins(const std::string& address);
  void session_over(const std::string& address);
  /// Spends one of the address's rate tokens, without a handshake: false when none is
  /// left. For sources that make no connections (UDP datagrams).
  bool take_rate(const std::string& address,
                 std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  /// Spends one of the address's new-device tokens: false when none is left.
  bool new_device(const std::string& address,
                  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

  [[nodiscard]] bool enabled() const {
    return settings_.connections_per_second > 0 || settings_.handshakes > 0 ||
           settings_.sessions > 0 || settings_.new_devices_per_hour > 0;
  }
  [[nodiscard]] const address_limit_settings& settings() const { return settings_; }
  [[nodiscard]] std::uint64_t refused_over_rate() const { return over_rate_.load(); }
  [[nodiscard]] std::uint64_t refused_over_handshakes() const { return over_handshakes_.load(); }
  /// Handshakes in progress over every address.
  [[nodiscard]] std::int64_t handshakes_in_progress() const { return in_progress_.load(); }
  [[nodiscard]] std::size_t addresses_tracked() const;

 private:
  struct entry {
    domain::token_bucket connections;
    domain::token_bucket devices;
    std::size_t handshakes = 0;
    std::size_t sessions = 0;
  };
  entry& entry_locked(const std::string& address, std::chrono::steady_clock::time_point now);
  [[nodiscard]] bool idle(const entry& e, std::chrono::steady_clock::time_point now) const;
  void prune(std::chrono::steady_clock::time_point now);

  const address_limit_settings settings_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, entry> entries_;
  std::size_t prune_at_ = 1024;
  std::atomic<std::uint64_t> over_rate_{0};
  std::atomic<std::uint64_t> over_handshakes_{0};
  std::atomic<std::int64_t> in_progress_{0};
};

}  // namespace tgw::infra::net
