#include "infra/net/address_limits.hpp"

#include <algorithm>

#include "infra/net/ip_prefix.hpp"

namespace tgw::infra::net {

namespace {

address_limit_settings normalized(address_limit_settings s) {
  if (s.connections_per_second > 0) s.burst = std::max(1.0, s.burst);
  if (s.new_devices_per_hour > 0) s.new_devices_burst = std::max(1.0, s.new_devices_burst);
  s.ipv6_prefix = std::min(s.ipv6_prefix, 128U);
  return s;
}

}  // namespace

address_limits::address_limits(address_limit_settings settings) : settings_(normalized(settings)) {}

std::string address_limits::key_of(const ip_endpoint& address) const {
  const ip_endpoint a = unmapped(address);
  const ip_endpoint counted = a.v6 ? masked(a, settings_.ipv6_prefix) : a;
  return std::string(reinterpret_cast<const char*>(counted.address.data()), a.v6 ? 16 : 4);
}

std::string address_limits::describe(const ip_endpoint& address) const {
  const ip_endpoint a = unmapped(address);
  if (a.v6) return ip_prefix{masked(a, settings_.ipv6_prefix), settings_.ipv6_prefix}.to_string();
  const std::string text = a.to_string();
  return text.substr(0, text.rfind(':'));
}

address_limits::entry& address_limits::entry_locked(const std::string& address,
                                                    std::chrono::steady_clock::time_point now) {
  auto [it, fresh] = entries_.try_emplace(address);
  entry& e = it->second;
  if (fresh) {
    e.connections = domain::token_bucket(settings_.connections_per_second, settings_.burst, now);
    e.devices = domain::token_bucket(settings_.new_devices_per_hour / 3600.0,
                                     settings_.new_devices_burst, now);
  }
  return e;
}

address_verdict address_limits::admit(const std::string& address,
                                      std::chrono::steady_clock::time_point now) {
  const std::lock_guard lock(mutex_);
  entry& e = entry_locked(address, now);
  if (settings_.handshakes > 0 && e.handshakes >= settings_.handshakes) {
    over_handshakes_.fetch_add(1, std::memory_order_relaxed);
    return address_verdict::over_handshakes;
  }
  if (!e.connections.take(now)) {
    over_rate_.fetch_add(1, std::memory_order_relaxed);
    return address_verdict::over_rate;
  }
  ++e.handshakes;
  in_progress_.fetch_add(1, std::memory_order_relaxed);
  if (entries_.size() >= prune_at_) prune(now);
  return address_verdict::admitted;
}

void address_limits::handshake_over(const std::string& address) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(address);
  if (it == entries_.end() || it->second.handshakes == 0) return;
  --it->second.handshakes;
  in_progress_.fetch_sub(1, std::memory_order_relaxed);
}

bool address_limits::session_begins(const std::string& address) {
  const std::lock_guard lock(mutex_);
  entry& e = entry_locked(address, std::chrono::steady_clock::now());
  if (settings_.sessions > 0 && e.sessions >= settings_.sessions) return false;
  ++e.sessions;
  return true;
}

void address_limits::session_over(const std::string& address) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(address);
  if (it != entries_.end() && it->second.sessions > 0) --it->second.sessions;
}

bool address_limits::take_rate(const std::string& address,
                               std::chrono::steady_clock::time_point now) {
  if (settings_.connections_per_second <= 0) return true;
  const std::lock_guard lock(mutex_);
  const bool ok = entry_locked(address, now).connections.take(now);
  if (!ok) over_rate_.fetch_add(1, std::memory_order_relaxed);
  if (entries_.size() >= prune_at_) prune(now);
  return ok;
}

bool address_limits::new_device(const std::string& address,
                                std::chrono::steady_clock::time_point now) {
  if (settings_.new_devices_per_hour <= 0) return true;
  const std::lock_guard lock(mutex_);
  return entry_locked(address, now).devices.take(now);
}

std::size_t address_limits::addresses_tracked() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

// Dropping idle entries keeps the table to the addresses active now. The next prune
// waits until the table doubles, so the cost stays linear in connections.
// An entry that holds nothing and whose buckets have refilled says nothing a fresh one
// would not.
bool address_limits::idle(const entry& e, std::chrono::steady_clock::time_point now) const {
  return e.handshakes == 0 && e.sessions == 0 && e.connections.full(now) && e.devices.full(now);
}

void address_limits::prune(std::chrono::steady_clock::time_point now) {
  std::erase_if(entries_, [&](const auto& kv) { return idle(kv.second, now); });
  prune_at_ = std::max<std::size_t>(1024, entries_.size() * 2);
}

}  // namespace tgw::infra::net
