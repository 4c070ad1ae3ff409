// Fuzzes the PROXY protocol header parser that reads the first bytes of every device
// connection behind a balancer. Oracles: a header is never longer than the input or
// the limit, bytes after it never change the verdict, every shorter prefix of a good
// header only waits for more, and a v2 header's addresses are the bytes it carries.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_support.hpp"
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

  if (p.header.version == 2 && p.header.has_addresses) {
    const std::size_t ip = p.header.source.v6 ? 16 : 4;
    require(std::equal(input.begin() + 16, input.begin() + 16 + static_cast<std::ptrdiff_t>(ip),
                       p.header.source.address.begin()));
    require(p.header.source.port == (input[16 + 2 * ip] << 8 | input[16 + 2 * ip + 1]));
  }
  if (p.header.has_addresses) require(p.header.source.v6 == p.header.destination.v6);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  for (const auto mode : {proxy_mode::off, proxy_mode::v1, proxy_mode::v2, proxy_mode::any})
    check(input, mode);
  return 0;
}
