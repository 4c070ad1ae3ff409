// Fuzzes the PROXY protocol header parser that reads the first bytes of every device
// connection behind a balancer. Oracles: a header is never longer than the input or
// the limit, bytes after it never change the verdict, every shorter prefix of a good
// header only waits for more, an accepted v1 line is printable text up to its CRLF,
// and a v2 header's addresses are the bytes it carries (an IPv4-mapped IPv6 address
// given as the IPv4 address it is).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_support.hpp"
#include "infra/net/ip_prefix.hpp"
#include "infra/net/proxy_header.hpp"

namespace {

using namespace tgw::infra::net;
using tgw::fuzz::require;

void check(std::span<const std::uint8_t> input, proxy_mode mode) {
  const proxy_parse p = parse_proxy_header(input, mode);
  if (mode == proxy_mode::off) {
    require(p.status == proxy_status::need_more && p.length == 0);
    return;
  }
  if (p.status == proxy_status::error) {
    require(!p.error.empty());
    return;
  }
  if (p.status == proxy_status::need_more) {
    require(p.length == 0 && input.size() < max_proxy_header);
    return;
  }
  require(p.length > 0 && p.length <= input.size() && p.length <= max_proxy_header);
  require(p.header.version == 1 || p.header.version == 2);
  if (mode == proxy_mode::v1) require(p.header.version == 1);
  if (mode == proxy_mode::v2) require(p.header.version == 2);

  // The verdict depends on the header's bytes only.
  const auto exact = parse_proxy_header(input.first(p.length), mode);
  require(exact.status == proxy_status::ok && exact.length == p.length);
  require(exact.header.has_addresses == p.header.has_addresses);
  require(exact.header.source == p.header.source);
  for (std::size_t n = 0; n < p.length; ++n)
    require(parse_proxy_header(input.first(n), mode).status == proxy_status::need_more);

  if (p.header.version == 1) {
    // "PROXY " ... CRLF, every byte before the CRLF printable ASCII: never a NUL.
    require(p.length >= 8 && input[p.length - 2] == '\r' && input[p.length - 1] == '\n');
    require(std::all_of(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(p.length - 2),
                        [](std::uint8_t b) { return b >= 0x20 && b <= 0x7E; }));
  }
  if (p.header.version == 2 && p.header.has_addresses) {
    const bool v6 = (input[13] >> 4) == 2;
    const std::size_t ip = v6 ? 16 : 4;
    tgw::infra::net::ip_endpoint carried;
    carried.v6 = v6;
    std::copy(input.begin() + 16, input.begin() + 16 + static_cast<std::ptrdiff_t>(ip),
              carried.address.begin());
    carried.port = static_cast<std::uint16_t>(input[16 + 2 * ip] << 8 | input[16 + 2 * ip + 1]);
    require(p.header.source == unmapped(carried));
  }
  // Never an IPv4-mapped address: the limits must see one form of each device.
  if (p.header.has_addresses) require(unmapped(p.header.source) == p.header.source);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  for (const auto mode : {proxy_mode::off, proxy_mode::v1, proxy_mode::v2, proxy_mode::any})
    check(input, mode);
  return 0;
}
