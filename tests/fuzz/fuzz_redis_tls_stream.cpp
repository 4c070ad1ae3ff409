// Fuzzes the read path of a Redis server link over TLS: a TLS server on the other end of
// a socketpair writes the input's bytes (whatever they are: replies, halves of replies,
// garbage) in records of random sizes, cut into TCP chunks of 1 to N bytes, then closes
// (with or without close_notify, or in the middle). Input: byte 0 picks the largest
// chunk, byte 1 the seed of the cuts and the ending, the rest is what the server sends.
// Oracle: the link's replies are exactly what hiredis' reader parses from the same
// bytes handed over at once, up to the first reply that is not whole, which is an "IO"
// error and never a reply; the link is closed after it. TLS framing never changes or
// invents a byte.

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "infra/redis/reply_reader.hpp"
#include "infra/redis/server_link.hpp"
#include "tests/support/redis_tls.hpp"
#include "tests/support/tls_reply_server.hpp"

namespace {

using namespace std::chrono_literals;
using tgw::infra::redis::endpoint;
using tgw::infra::redis::reply_reader;
using tgw::infra::redis::server_link;
using tgw::infra::redis::value;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

// What the bytes parse to, read at once: the whole replies, and whether garbage ended
// them (a parse error) rather than the end of the input.
std::vector<value> parse_all(const std::string& bytes, bool& bad) {
  reply_reader reader;
  reader.feed(bytes.data(), bytes.size());
  std::vector<value> out;
  bad = false;
  while (true) {
    value v;
    std::string error;
    const auto r = reader.next(v, error);
    if (r != reply_reader::result::reply) {
      bad = r == reply_reader::result::bad;
      return out;
    }
    out.push_back(std::move(v));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2 || size > 64 * 1024) return 0;
  constexpr std::array<std::size_t, 4> chunks{1, 5, 300, 16'000};
  const std::size_t max_chunk = chunks[data[0] % chunks.size()];
  const auto how =
      data[1] % 2 == 0 ? tgw::test::ending::close_at_end : tgw::test::ending::close_mid_reply;
  const std::string bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  bool bad = false;
  const std::size_t sent_bytes =
      how == tgw::test::ending::close_mid_reply ? bytes.size() / 2 : bytes.size();
  const std::vector<value> expected = parse_all(bytes.substr(0, sent_bytes), bad);

  int fds[2];
  require(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  tgw::test::tls_reply_server server(fds[1], data[1], max_chunk, how);
  std::thread t([&] { server.serve(bytes); });
  endpoint where;
  where.tls = tgw::test::redis_tls_files::shared().client();
  server_link link({5000ms, 5000ms, ""});
  std::string error;
  require(link.adopt(fds[0], where, "fuzz-server", error));
  // One more than the whole replies: it must be an IO error (end of input or garbage).
  const std::vector<value> got = link.receive_replies(expected.size() + 1);
  link.close();
  t.join();
  ::close(fds[1]);
  require(got.size() == expected.size() + 1);
  for (std::size_t i = 0; i < expected.size(); ++i) require(got[i] == expected[i]);
  require(got.back().is_error() && tgw::infra::redis::is_transport(got.back().failure));
  require(!link.is_open());
  return 0;
}
