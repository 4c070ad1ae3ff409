#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "infra/net/asio.hpp"

namespace tgw::infra::http {

/// How an address is counted: an IPv4 address (IPv4-mapped IPv6 taken as the IPv4
/// address it carries) alone, "198.51.100.7"; an IPv6 address by its prefix of
/// `ipv6_prefix_bits`, "2001:db8:0:1::/64": a host is commonly given a whole /64.
[[nodiscard]] std::string address_key(const net::asio::ip::address& address,
                                      unsigned ipv6_prefix_bits);

/// The connections open, in all and per address key, against their caps. Consulted
/// once per connection, on accept and on close, under one mutex; an address leaves
/// the table with its last connection, so it holds at most max_total entries.
/// max_per_address 0: no cap per address.
class address_table {
 public:
  enum class verdict : std::uint8_t { admitted, over_total, over_address };

  address_table(std::size_t max_total, std::size_t max_per_address)
      : max_total_(max_total), max_per_address_(max_per_address) {}

  /// On admission the address holds one slot until release().
  verdict admit(const std::string& key);
  void release(const std::string& key);

 private:
  const std::size_t max_total_;
  const std::size_t max_per_address_;
  std::mutex mutex_;
  std::size_t total_ = 0;
  std::unordered_map<std::string, std::size_t> open_;
};

}  // namespace tgw::infra::http
