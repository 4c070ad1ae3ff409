#include "infra/http/address_table.hpp"

#include <algorithm>

namespace tgw::infra::http {

std::string address_key(const net::asio::ip::address& address, unsigned ipv6_prefix_bits) {
  namespace ip = net::asio::ip;
  if (address.is_v4()) return address.to_string();
  const ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, v6).to_string();
  const auto bits = static_cast<unsigned short>(std::min(ipv6_prefix_bits, 128U));
  return ip::make_network_v6(v6, bits).canonical().to_string();
}

address_table::verdict address_table::admit(const std::string& key) {
  const std::lock_guard lock(mutex_);
  if (total_ >= max_total_) return verdict::over_total;
  const auto it = open_.find(key);
  if (max_per_address_ > 0 && it != open_.end() && it->second >= max_per_address_)
    return verdict::over_address;
  ++open_[key];
  ++total_;
  return verdict::admitted;
}

void address_table::release(const std::string& key) {
  const std::lock_guard lock(mutex_);
  const auto it = open_.find(key);
  if (it == open_.end()) return;
  --total_;
  if (--it->second == 0) open_.erase(it);
}

}  // namespace tgw::infra::http
