#include "infra/net/ip_prefix.hpp"

#include <algorithm>
#include <array>

namespace tgw::infra::net {
namespace {

constexpr std::array<std::uint8_t, 12> v4_mapped_prefix = {0, 0, 0, 0, 0,    0,
                                                           0, 0, 0, 0, 0xFF, 0xFF};
// RFC 6052's well-known NAT64 prefix, 64:ff9b::/96: an IPv4 host as an IPv6-only
// network's NAT64 gateway presents it.
constexpr std::array<std::uint8_t, 12> nat64_prefix = {0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};

unsigned width(const ip_endpoint& a) {
  return a.v6 ? 128 : 32;
}

bool parse_bits(std::string_view text, unsigned max, unsigned& out) {
  if (text.empty() || text.size() > 3 || (text.size() > 1 && text[0] == '0')) return false;
  unsigned value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > max) return false;
  out = value;
  return true;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

ip_endpoint unmapped(const ip_endpoint& address) {
  const auto starts_with = [&](const std::array<std::uint8_t, 12>& prefix) {
    return std::equal(prefix.begin(), prefix.end(), address.address.begin());
  };
  if (!address.v6 || !(starts_with(v4_mapped_prefix) || starts_with(nat64_prefix))) return address;
  ip_endpoint out;
  out.port = address.port;
  std::copy(address.address.begin() + 12, address.address.end(), out.address.begin());
  return out;
}

ip_endpoint masked(const ip_endpoint& address, unsigned bits) {
  ip_endpoint out = address;
  const unsigned total = width(address);
  for (unsigned bit = std::min(bits, total); bit < total; ++bit)
    out.address[bit / 8] &= static_cast<std::uint8_t>(~(0x80U >> (bit % 8)));
  return out;
}

bool ip_prefix::contains(const ip_endpoint& address) const {
  const ip_endpoint a = unmapped(address);
  if (a.v6 != network.v6) return false;
  return masked(a, bits).address == network.address;
}

std::string ip_prefix::to_string() const {
  const std::string text = network.to_string();  // "1.2.3.4:0" or "[::1]:0"
  const std::string bare =
      network.v6 ? text.substr(1, text.rfind(']') - 1) : text.substr(0, text.rfind(':'));
  return bare + "/" + std::to_string(bits);
}

std::optional<std::vector<ip_prefix>> parse_prefixes(std::string_view text, std::string& error) {
  std::vector<ip_prefix> out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view entry = trimmed(text.substr(0, comma));
    const std::size_t slash = entry.find('/');
    ip_prefix p;
    if (entry.empty() || !ip_endpoint::parse(std::string(entry.substr(0, slash)), 0, p.network)) {
      error = "'" + std::string(entry) + "' is not an address or address/bits";
      return std::nullopt;
    }
    p.bits = width(p.network);
    if (slash != std::string_view::npos &&
        !parse_bits(entry.substr(slash + 1), width(p.network), p.bits)) {
      error = "'" + std::string(entry) + "': the bits after '/' must be 0 to " +
              std::to_string(width(p.network));
      return std::nullopt;
    }
    if (masked(p.network, p.bits).address != p.network.address) {
      error = "'" + std::string(entry) + "' has bits set past its prefix (the block is " +
              ip_prefix{masked(p.network, p.bits), p.bits}.to_string() + ")";
      return std::nullopt;
    }
    out.push_back(p);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

std::vector<ip_prefix> loopback_prefixes() {
  std::string ignored;
  return *parse_prefixes("127.0.0.0/8,::1/128", ignored);
}

}  // namespace tgw::infra::net
