// The TLS read path of a server link, as a property: whatever the record sizes a server
// writes and however TCP cuts the encrypted bytes (partial records, one byte at a
// time), the replies the link parses are exactly the replies sent; a connection closed
// in the middle of a reply is an IO error and never a reply; a server's request to
// renegotiate is refused and the replies after it still arrive. The server is an
// OpenSSL endpoint on the other end of a socketpair, in a thread
// (tests/support/tls_reply_server.hpp). tests/fuzz/fuzz_redis_tls_stream.cpp feeds the
// same path arbitrary bytes.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "infra/redis/server_link.hpp"
#include "tests/support/redis_tls.hpp"
#include "tests/support/tls_reply_server.hpp"

namespace tgw::infra::redis {
namespace {

using namespace std::chrono_literals;
using test::ending;
using test::redis_tls_files;
using test::tls_reply_server;

/// The RESP bytes of `v`, as a server writes it.
std::string resp(const value& v) {
  switch (v.type) {
    case value::kind::nil:
      return "$-1\r\n";
    case value::kind::integer:
      return ":" + std::to_string(v.integer) + "\r\n";
    case value::kind::string:
      return "$" + std::to_string(v.text.size()) + "\r\n" + v.text + "\r\n";
    case value::kind::status:
      return "+" + v.text + "\r\n";
    case value::kind::error:
      return "-" + v.text + "\r\n";
    case value::kind::array: {
      std::string out = "*" + std::to_string(v.elements.size()) + "\r\n";
      for (const value& e : v.elements) out += resp(e);
      return out;
    }
  }
  return {};
}

value random_value(std::mt19937& rng, int depth = 0) {
  value v;
  switch (rng() % (depth < 3 ? 6 : 5)) {
    case 0:
      v.type = value::kind::integer;
      v.integer = static_cast<std::int64_t>(rng()) - (1LL << 31);
      break;
    case 1:
      v.type = value::kind::string;
      v.text.assign(rng() % 3 == 0 ? rng() % 40'000 : rng() % 40, 'a');
      for (char& c : v.text) c = static_cast<char>(rng() % 256);  // any bytes, \r\n too
      break;
    case 2:
      v.type = value::kind::status;
      v.text = "OK";
      break;
    case 3:
      v = value::make_error("ERR no such thing");
      break;
    case 4:
      break;  // nil
    default:
      v.type = value::kind::array;
      for (auto n = rng() % 5; n > 0; --n) v.elements.push_back(random_value(rng, depth + 1));
  }
  return v;
}

struct run_result {
  std::vector<value> replies;
  bool refused = false;
};

run_result run(const std::vector<value>& sent, std::uint32_t seed, std::size_t max_chunk,
               ending how, std::size_t read = 0) {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  std::string bytes;
  for (const value& v : sent) bytes += resp(v);
  tls_reply_server server(fds[1], seed, max_chunk, how);
  std::thread t([&] { server.serve(bytes); });
  endpoint where;
  where.tls = redis_tls_files::shared().client();
  server_link link({5000ms, 5000ms, ""});
  std::string error;
  run_result r;
  if (link.adopt(fds[0], where, "test-server", error))
    r.replies = link.receive_replies(read == 0 ? sent.size() : read);
  else
    ADD_FAILURE() << error;
  link.close();  // closes fds[0]
  t.join();
  ::close(fds[1]);
  r.refused = server.refused();
  return r;
}

TEST(TlsStreamProperty, RepliesArriveWholeWhateverTheRecordsAndCuts) {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    std::vector<value> sent;
    for (auto n = 1 + rng() % 30; n > 0; --n) sent.push_back(random_value(rng));
    // Chunks of at most 1, 7, 300 or 16,000 bytes: a byte at a time, a record header
    // cut in two, several records in one read.
    const std::size_t max_chunk = std::array<std::size_t, 4>{1, 7, 300, 16'000}[seed % 4];
    const run_result r = run(sent, seed, max_chunk, ending::stay_open);
    ASSERT_EQ(r.replies.size(), sent.size());
    for (std::size_t i = 0; i < sent.size(); ++i)
      ASSERT_EQ(r.replies[i], sent[i]) << "seed " << seed << ", reply " << i;
  }
}

TEST(TlsStreamProperty, ACloseInTheMiddleOfAReplyIsAnIoErrorNeverAReply) {
  for (std::uint32_t seed = 1; seed <= 10; ++seed) {
    value big;
    big.type = value::kind::string;
    big.text.assign(100'000 + seed * 1000, 'x');
    value small;
    small.type = value::kind::integer;
    small.integer = 7;
    // The first reply is whole in the first half; the second is cut.
    const run_result r = run({small, big}, seed, 1 + seed * 100, ending::close_mid_reply);
    ASSERT_EQ(r.replies.size(), 2U);
    EXPECT_EQ(r.replies[0], small);
    ASSERT_TRUE(r.replies[1].is_error());
    EXPECT_TRUE(is_transport(r.replies[1].failure)) << r.replies[1].text;
  }
}

TEST(TlsStreamProperty, ARenegotiationIsRefusedAndTheRepliesStillArrive) {
  std::mt19937 rng(99);
  std::vector<value> sent;
  for (int i = 0; i < 10; ++i) sent.push_back(random_value(rng));
  const run_result r = run(sent, 99, 64, ending::renegotiate_first);
  ASSERT_EQ(r.replies.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) EXPECT_EQ(r.replies[i], sent[i]) << i;
  EXPECT_TRUE(r.refused);
}

}  // namespace
}  // namespace tgw::infra::redis
