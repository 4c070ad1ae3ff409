#include "infra/net/proxy_header.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "infra/net/ip_prefix.hpp"

namespace tgw::infra::net {
namespace {

// The PROXY protocol specification (haproxy.org, doc/proxy-protocol.txt): v1 is one
// text line of at most 107 bytes, v2 starts with this 12-byte signature.
constexpr std::size_t v1_max = 107;
constexpr std::string_view v1_prefix = "PROXY ";
constexpr std::array<std::uint8_t, 12> v2_signature = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                       0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
constexpr std::size_t v2_fixed = 16;

proxy_parse failed(std::string why) {
  proxy_parse p;
  p.status = proxy_status::error;
  p.error = std::move(why);
  return p;
}

// The first bytes as hex, for an error that shows what arrived instead.
std::string first_bytes(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 8); ++i) {
    if (i > 0) out += ' ';
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 0xF];
  }
  return out;
}

// True while `bytes` are a prefix of `pattern` (or `pattern` is a prefix of them).
bool matches_so_far(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> pattern) {
  const std::size_t n = std::min(bytes.size(), pattern.size());
  return std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n), pattern.begin());
}

std::span<const std::uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

bool parse_port(std::string_view text, std::uint16_t& out) {
  if (text.empty() || text.size() > 5 || (text.size() > 1 && text[0] == '0')) return false;
  std::uint32_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (value > 65535) return false;
  out = static_cast<std::uint16_t>(value);
  return true;
}

// The spec's address forms: TCP4 a dotted quad (7 to 15 characters), TCP6 an RFC 4291
// address (at most 39). The character check comes first: inet_pton would stop at a
// NUL and accept what came before it.
bool parse_address(std::string_view text, bool v6, ip_endpoint& out) {
  const std::size_t shortest = v6 ? 2 : 7;
  const std::size_t longest = v6 ? 39 : 15;
  if (text.size() < shortest || text.size() > longest) return false;
  const bool allowed = std::all_of(text.begin(), text.end(), [v6](char c) {
    return (c >= '0' && c <= '9') || c == '.' ||
           (v6 && (c == ':' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
  });
  if (!allowed) return false;
  char buf[40] = {};
  std::memcpy(buf, text.data(), text.size());
  out.v6 = v6;
  out.address = {};
  return ::inet_pton(v6 ? AF_INET6 : AF_INET, buf, out.address.data()) == 1;
}

// The spec's line is US-ASCII text: a byte outside the printable range (a NUL, a
// control character, a lone CR or LF) is no header, and is refused as soon as seen.
bool printable(std::uint8_t b) {
  return b >= 0x20 && b <= 0x7E;
}

proxy_parse parse_v1(std::span<const std::uint8_t> bytes) {
  if (!matches_so_far(bytes, as_bytes(v1_prefix)))
    return failed("expected a PROXY protocol v1 header, got " + first_bytes(bytes));
  const std::size_t window = std::min(bytes.size(), v1_max);
  std::size_t end = 0;
  while (end < window && printable(bytes[end])) ++end;
  if (end == window) {
    if (bytes.size() >= v1_max) return failed("PROXY v1 header longer than 107 bytes");
    return {};
  }
  // The first byte that is not text must start the CRLF that ends the line.
  if (bytes[end] != '\r' || (end + 1 < bytes.size() && bytes[end + 1] != '\n'))
    return failed("PROXY v1 header holds a byte that is not text (0x" +
                  first_bytes(bytes.subspan(end, 1)) + ") before its CRLF");
  if (end + 1 >= window) {
    if (end + 1 >= v1_max) return failed("PROXY v1 header longer than 107 bytes");
    return {};
  }
  const std::size_t crlf = end;
  const std::string_view line(reinterpret_cast<const char*>(bytes.data()), crlf);
  // Fields are separated by exactly one space; a seventh field or an empty one
  // (two spaces, a trailing space) makes the line malformed.
  std::array<std::string_view, 7> fields{};
  std::size_t count = 0;
  for (std::size_t at = 0; count < fields.size();) {
    const std::size_t space = line.find(' ', at);
    fields[count++] = line.substr(at, space == std::string_view::npos ? space : space - at);
    if (space == std::string_view::npos) break;
    at = space + 1;
  }
  proxy_parse p;
  p.status = proxy_status::ok;
  p.length = crlf + 2;
  p.header.version = 1;
  // "PROXY UNKNOWN" may be followed by anything; the receiver ignores it.
  if (count >= 2 && fields[1] == "UNKNOWN") return p;
  const bool v6 = fields[1] == "TCP6";
  if (!v6 && fields[1] != "TCP4")
    return failed("PROXY v1 protocol '" + std::string(fields[1]) +
                  "' is none of TCP4, TCP6, UNKNOWN");
  if (count != 6 ||
      std::any_of(fields.begin(), fields.begin() + 6, [](std::string_view f) { return f.empty(); }))
    return failed("PROXY v1 header needs exactly: PROXY " + std::string(fields[1]) +
                  " <source> <destination> <source port> <destination port>");
  if (!parse_address(fields[2], v6, p.header.source) ||
      !parse_address(fields[3], v6, p.header.destination))
    return failed("PROXY v1 address is not an " + std::string(v6 ? "IPv6" : "IPv4") + " address");
  if (!parse_port(fields[4], p.header.source.port) ||
      !parse_port(fields[5], p.header.destination.port))
    return failed("PROXY v1 port is not a number from 0 to 65535");
  p.header.source = unmapped(p.header.source);
  p.header.destination = unmapped(p.header.destination);
  p.header.has_addresses = true;
  return p;
}

proxy_parse parse_v2(std::span<const std::uint8_t> bytes) {
  if (!matches_so_far(bytes, v2_signature))
    return failed("expected a PROXY protocol v2 header, got " + first_bytes(bytes));
  if (bytes.size() > v2_signature.size() && (bytes[12] >> 4) != 2)
    return failed("PROXY v2 header of version " + std::to_string(bytes[12] >> 4));
  if (bytes.size() < v2_fixed) return {};
  const std::uint8_t command = bytes[12] & 0x0F;
  const std::uint8_t family = bytes[13] >> 4;
  const std::uint8_t transport = bytes[13] & 0x0F;
  const std::size_t length = v2_fixed + (std::size_t{bytes[14]} << 8 | bytes[15]);
  if (command > 1) return failed("PROXY v2 command " + std::to_string(command) + " is unknown");
  if (length > max_proxy_header)
    return failed("PROXY v2 header of " + std::to_string(length) + " bytes exceeds the " +
                  std::to_string(max_proxy_header) + "-byte limit");
  if (bytes.size() < length) return {};

  proxy_parse p;
  p.status = proxy_status::ok;
  p.length = length;
  p.header.version = 2;
  // LOCAL: the balancer's own connection (a health check); the addresses, if any,
  // mean nothing.
  if (command == 0) return p;
  if (family > 3) return failed("PROXY v2 address family " + std::to_string(family) + " unknown");
  if (transport > 2) return failed("PROXY v2 transport " + std::to_string(transport) + " unknown");
  if (transport == 2) return failed("PROXY v2 header for a datagram connection on a TCP port");
  // UNSPEC and UNIX carry no IP address: the connection's own addresses stay.
  if (family == 0 || family == 3) return p;
  const bool v6 = family == 2;
  const std::size_t ip = v6 ? 16 : 4;
  if (length - v2_fixed < 2 * ip + 4)
    return failed("PROXY v2 header too short for its " + std::string(v6 ? "IPv6" : "IPv4") +
                  " addresses");
  const std::uint8_t* a = bytes.data() + v2_fixed;
  p.header.source.v6 = p.header.destination.v6 = v6;
  std::copy(a, a + ip, p.header.source.address.begin());
  std::copy(a + ip, a + 2 * ip, p.header.destination.address.begin());
  p.header.source.port = static_cast<std::uint16_t>(a[2 * ip] << 8 | a[2 * ip + 1]);
  p.header.destination.port = static_cast<std::uint16_t>(a[2 * ip + 2] << 8 | a[2 * ip + 3]);
  p.header.source = unmapped(p.header.source);
  p.header.destination = unmapped(p.header.destination);
  p.header.has_addresses = true;
  return p;
}

}  // namespace

std::optional<proxy_mode> parse_proxy_mode(std::string_view text) {
  if (text == "off") return proxy_mode::off;
  if (text == "v1") return proxy_mode::v1;
  if (text == "v2") return proxy_mode::v2;
  if (text == "any") return proxy_mode::any;
  return std::nullopt;
}

std::string_view to_string(proxy_mode mode) {
  switch (mode) {
    case proxy_mode::off:
      return "off";
    case proxy_mode::v1:
      return "v1";
    case proxy_mode::v2:
      return "v2";
    case proxy_mode::any:
      return "any";
  }
  return "off";
}

proxy_parse parse_proxy_header(std::span<const std::uint8_t> bytes, proxy_mode mode) {
  if (bytes.empty() || mode == proxy_mode::off) return {};
  if (mode == proxy_mode::any) {
    if (bytes[0] == v1_prefix[0]) return parse_v1(bytes);
    if (bytes[0] == v2_signature[0]) return parse_v2(bytes);
    return failed("expected a PROXY protocol header, got " + first_bytes(bytes));
  }
  return mode == proxy_mode::v1 ? parse_v1(bytes) : parse_v2(bytes);
}

}  // namespace tgw::infra::net
