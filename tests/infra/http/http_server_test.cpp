// The HTTP server against real sockets on a free loopback port: every budget of
// server_limits closes what goes over it and counts it, while a well-behaved client
// on the same server is answered; handlers answer now, later, late or never.
#include "infra/http/server.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "infra/net/tls_context.hpp"
#include "tests/support/raw_http_client.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::infra::http {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::raw_client;

const std::string get_ok = "GET /ok HTTP/1.1\r\nHost: t\r\n\r\n";

router plain_routes() {
  router r;
  r.get("/ok", [](const request&) { return response::text(200, "ok\n"); });
  r.add("POST", "/echo", [](request q, responder done) { done(response::text(200, q.body)); });
  return r;
}

// `n` connections from `source`, each holding half a request, once the server has them.
std::vector<raw_client> hold(const server& s, int n, const char* source = "127.0.0.1") {
  std::vector<raw_client> held;
  for (int i = 0; i < n; ++i) {
    held.emplace_back(s.port(), source);
    EXPECT_TRUE(held.back().send("GET /ok HTTP/1.1\r\n"));
  }
  EXPECT_TRUE(eventually([&] { return s.stats().open.load() >= n; }));
  return held;
}

// Deadlines long enough never to pass while a test looks, unless it sets one short.
server_limits patient() {
  server_limits l;
  l.header_timeout = 60s;
  l.request_timeout = 60s;
  l.idle_timeout = 60s;
  return l;
}

TEST(HttpServer, AnswersAndKeepsTheConnectionForTheNextRequest) {
  server s("127.0.0.1:0", plain_routes(), patient());
  raw_client c(s.port());
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.send(get_ok));
    const std::string answer = c.read_response();
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
    EXPECT_TRUE(answer.ends_with("\r\n\r\nok\n")) << answer;
  }
  EXPECT_TRUE(c.open_now());
  EXPECT_EQ(s.stats().requests.load(), 2U);
}

TEST(HttpServer, ClosesAfterAnHttp10RequestOrConnectionClose) {
  server s("127.0.0.1:0", plain_routes(), patient());
  for (const std::string request :
       {"GET /ok HTTP/1.0\r\n\r\n", "GET /ok HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"}) {
    raw_client c(s.port());
    ASSERT_TRUE(c.send(request));
    ASSERT_TRUE(c.closed_by_server());
    EXPECT_TRUE(c.received().starts_with("HTTP/1.1 200 OK\r\n")) << c.received();
  }
}

TEST(HttpServer, TellsAnHttp10ClientThatAskedToKeepTheConnectionThatItIsKept) {
  server s("127.0.0.1:0", plain_routes(), patient());
  raw_client c(s.port());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.send("GET /ok HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    const std::string answer = c.read_response();
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
    EXPECT_NE(answer.find("Connection: keep-alive\r\n"), std::string::npos) << answer;
  }
  EXPECT_TRUE(c.open_now());
}

TEST(HttpServer, AnswersPipelinedRequestsInOrder) {
  server s("127.0.0.1:0", plain_routes(), patient());
  raw_client c(s.port());
  ASSERT_TRUE(
      c.send(get_ok + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc" + get_ok));
  EXPECT_TRUE(c.read_response().ends_with("ok\n"));
  EXPECT_TRUE(c.read_response().ends_with("\r\n\r\nabc"));
  EXPECT_TRUE(c.read_response().ends_with("ok\n"));
}

TEST(HttpServer, RoutesUnknownPathsAndMethodsToTheirStatus) {
  server s("127.0.0.1:0", plain_routes(), patient());
  raw_client c(s.port());
  ASSERT_TRUE(c.send("GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 404 "));
  ASSERT_TRUE(c.send("DELETE /ok HTTP/1.1\r\nHost: t\r\n\r\n"));
  const std::string wrong = c.read_response();
  EXPECT_TRUE(wrong.starts_with("HTTP/1.1 405 ")) << wrong;
  EXPECT_NE(wrong.find("Allow: GET, HEAD\r\n"), std::string::npos) << wrong;
  ASSERT_TRUE(c.send("GET /%zz HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 400 "));
  // None of these is a reason to close: the connection goes on.
  ASSERT_TRUE(c.send(get_ok));
  EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 200 "));
}

TEST(HttpServer, AnswersHeadWithTheLengthOfGetAndNoBody) {
  server s("127.0.0.1:0", plain_routes(), patient());
  raw_client c(s.port());
  ASSERT_TRUE(c.send("HEAD /ok HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_TRUE(c.received().starts_with("HTTP/1.1 200 OK\r\n")) << c.received();
  EXPECT_NE(c.received().find("Content-Length: 3\r\n"), std::string::npos) << c.received();
  EXPECT_TRUE(c.received().ends_with("\r\n\r\n")) << c.received();
}

TEST(HttpServer, RefusesAHeadOverItsCapWith431AndCloses) {
  server_limits l = patient();
  l.max_header_bytes = 1024;
  server s("127.0.0.1:0", plain_routes(), l);
  raw_client c(s.port());
  ASSERT_TRUE(
      c.send("GET /ok HTTP/1.1\r\nHost: t\r\nX-Filler: " + std::string(2048, 'x') + "\r\n\r\n"));
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_TRUE(c.received().empty() || c.received().starts_with("HTTP/1.1 431 ")) << c.received();
  EXPECT_EQ(s.stats().closed_for(close_reason::header_too_large), 1U);
  // A head within the cap, on another connection, is served.
  raw_client next(s.port());
  ASSERT_TRUE(next.send(get_ok));
  EXPECT_TRUE(next.read_response().starts_with("HTTP/1.1 200 "));
}

TEST(HttpServer, RefusesABodyOverItsCapWith413AndCloses) {
  server_limits l = patient();
  l.max_body_bytes = 16;
  server s("127.0.0.1:0", plain_routes(), l);
  // Declared too large: refused on the head, before the body is read.
  raw_client declared(s.port());
  ASSERT_TRUE(declared.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 17\r\n\r\n"));
  ASSERT_TRUE(declared.closed_by_server());
  EXPECT_TRUE(declared.received().starts_with("HTTP/1.1 413 ")) << declared.received();
  // Chunked, and too large only once the chunks arrive.
  raw_client chunked(s.port());
  ASSERT_TRUE(
      chunked.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n" +
                   std::string(16, 'a') + "\r\n1\r\nb\r\n0\r\n\r\n"));
  ASSERT_TRUE(chunked.closed_by_server());
  EXPECT_TRUE(chunked.received().starts_with("HTTP/1.1 413 ")) << chunked.received();
  EXPECT_EQ(s.stats().closed_for(close_reason::body_too_large), 2U);
}

TEST(HttpServer, AnswersExpect100ContinueBeforeReadingTheBody) {
  server s("127.0.0.1:0", plain_routes(), patient());
  raw_client c(s.port());
  ASSERT_TRUE(c.send(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(c.read_response(), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(c.send("abc"));
  EXPECT_TRUE(c.read_response().ends_with("\r\n\r\nabc"));
}

TEST(HttpServer, RefusesWhatIsNotHttp11) {
  server s("127.0.0.1:0", plain_routes(), patient());
  for (const std::string junk :
       {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "GET http://elsewhere/ok HTTP/1.1\r\nHost: t\r\n\r\n"}) {
    raw_client c(s.port());
    ASSERT_TRUE(c.send(junk));
    ASSERT_TRUE(c.closed_by_server());
    EXPECT_TRUE(c.received().empty() || c.received().starts_with("HTTP/1.1 400 ")) << c.received();
  }
  EXPECT_EQ(s.stats().closed_for(close_reason::malformed), 3U);
}

TEST(HttpServer, ClosesAClientThatSendsNothingAtTheHeaderDeadline) {
  server_limits l = patient();
  l.header_timeout = 200ms;
  server s("127.0.0.1:0", plain_routes(), l);
  raw_client c(s.port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_TRUE(c.received().empty());
  EXPECT_EQ(s.stats().closed_for(close_reason::header_timeout), 1U);
}

TEST(HttpServer, ClosesAHeadSentByteByByteAtTheHeaderDeadline) {
  // A byte every 50 ms keeps any per-read timeout from passing; the deadline is for the
  // whole head, so the server closes while the bytes still come (after 0.3 s of 10 s).
  server_limits l = patient();
  l.header_timeout = 300ms;
  server s("127.0.0.1:0", plain_routes(), l);
  raw_client c(s.port());
  const std::string head = "GET /ok HTTP/1.1\r\nHost: t\r\nX-Slow: " + std::string(200, 'a');
  std::size_t sent = 0;
  while (sent < head.size() && c.open_now() && c.send(head.substr(sent, 1))) {
    ++sent;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_LT(sent, head.size());
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_TRUE(c.received().empty()) << c.received();
  EXPECT_EQ(s.stats().closed_for(close_reason::header_timeout), 1U);
}

TEST(HttpServer, ClosesAKeptAliveConnectionAtTheIdleDeadline) {
  server_limits l = patient();
  l.idle_timeout = 200ms;
  server s("127.0.0.1:0", plain_routes(), l);
  raw_client c(s.port());
  ASSERT_TRUE(c.send(get_ok));
  EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 200 "));
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_EQ(s.stats().closed_for(close_reason::idle_timeout), 1U);
  EXPECT_EQ(s.stats().closed_for(close_reason::header_timeout), 0U);
}

TEST(HttpServer, ClosesAConnectionOverThePerAddressCapAndServesOtherAddresses) {
  server_limits l = patient();
  l.max_connections_per_address = 2;
  server s("127.0.0.1:0", plain_routes(), l);
  std::vector<raw_client> held = hold(s, 2);
  raw_client third(s.port());
  ASSERT_TRUE(third.closed_by_server());
  EXPECT_TRUE(third.received().empty());
  EXPECT_EQ(s.stats().closed_for(close_reason::refused_address_limit), 1U);
  // Another address is not held to the first one's count.
  raw_client other(s.port(), "127.0.0.2");
  ASSERT_TRUE(other.send(get_ok));
  EXPECT_TRUE(other.read_response().starts_with("HTTP/1.1 200 "));
  // A slot comes back when its connection goes.
  held.pop_back();
  ASSERT_TRUE(eventually([&] { return s.stats().open.load() == 2; }));
  raw_client again(s.port());
  ASSERT_TRUE(again.send(get_ok));
  EXPECT_TRUE(again.read_response().starts_with("HTTP/1.1 200 "));
}

TEST(HttpServer, ClosesAConnectionOverTheTotalCap) {
  server_limits l = patient();
  l.max_connections = 3;
  l.max_connections_per_address = 0;
  server s("127.0.0.1:0", plain_routes(), l);
  const std::vector<raw_client> held = hold(s, 3);
  raw_client fourth(s.port(), "127.0.0.3");
  ASSERT_TRUE(fourth.closed_by_server());
  EXPECT_EQ(s.stats().closed_for(close_reason::refused_max_connections), 1U);
}

TEST(HttpServer, TakesAnAnswerGivenLaterFromAnotherThread) {
  router r;
  std::vector<std::thread> workers;
  r.add("GET", "/devices/{imei}", [&workers](request q, responder done) {
    workers.emplace_back([q = std::move(q), done = std::move(done)]() mutable {
      std::this_thread::sleep_for(50ms);
      done(response::text(200, std::string(*q.param("imei")) + "\n"));
    });
  });
  {
    server s("127.0.0.1:0", std::move(r), patient());
    raw_client c(s.port());
    ASSERT_TRUE(c.send("GET /devices/3563%30 HTTP/1.1\r\nHost: t\r\n\r\n"));
    EXPECT_TRUE(c.read_response().ends_with("\r\n\r\n35630\n"));
  }
  for (auto& w : workers) w.join();
}

TEST(HttpServer, Answers503WhenAHandlerMissesTheRequestDeadlineAndDropsItsLateAnswer) {
  router r;
  std::mutex mutex;
  std::optional<responder> kept;
  r.add("GET", "/slow", [&](request, responder done) {
    const std::lock_guard lock(mutex);
    kept.emplace(std::move(done));
  });
  server_limits l = patient();
  l.request_timeout = 200ms;
  server s("127.0.0.1:0", std::move(r), l);
  raw_client c(s.port());
  ASSERT_TRUE(c.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_TRUE(c.received().starts_with("HTTP/1.1 503 ")) << c.received();
  EXPECT_EQ(s.stats().closed_for(close_reason::request_timeout), 1U);
  const std::lock_guard lock(mutex);
  ASSERT_TRUE(kept);
  (*kept)(response::text(200, "too late\n"));  // dropped, harmlessly
}

TEST(HttpServer, Answers500ForAHandlerThatThrowsOrGivesUp) {
  router r;
  r.get("/throws", [](const request&) -> response { throw std::runtime_error("bug"); });
  r.add("GET", "/gives-up", [](request, responder) {});
  server s("127.0.0.1:0", std::move(r), patient());
  raw_client c(s.port());
  for (const char* path : {"/throws", "/gives-up"}) {
    ASSERT_TRUE(c.send(std::string("GET ") + path + " HTTP/1.1\r\nHost: t\r\n\r\n"));
    EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 500 ")) << path;
  }
  EXPECT_EQ(s.stats().handler_failures.load(), 2U);
}

// A streamed answer: the handler keeps the stream and pushes to it from its own thread.
struct kept_stream {
  std::mutex mutex;
  std::shared_ptr<body_stream> stream;
  std::atomic<bool> ended{false};
};

router streaming_routes(const std::shared_ptr<kept_stream>& kept) {
  router r;
  r.add("GET", "/events", [kept](request, responder done) {
    response head;
    head.content_type = "text/event-stream";
    auto s = done.stream(std::move(head));
    s->on_end([kept] { kept->ended = true; });
    const std::lock_guard lock(kept->mutex);
    kept->stream = s;
  });
  return r;
}

std::shared_ptr<body_stream> wait_for_stream(const std::shared_ptr<kept_stream>& kept) {
  std::shared_ptr<body_stream> s;
  EXPECT_TRUE(eventually([&] {
    const std::lock_guard lock(kept->mutex);
    s = kept->stream;
    return s != nullptr;
  }));
  return s;
}

TEST(HttpServer, StreamsChunksAsTheyComeAndEndsWithTheLastOne) {
  auto kept = std::make_shared<kept_stream>();
  server s("127.0.0.1:0", streaming_routes(kept), patient());
  raw_client c(s.port());
  ASSERT_TRUE(c.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n"));
  const auto stream = wait_for_stream(kept);
  ASSERT_TRUE(c.read_until("\r\n\r\n"));
  EXPECT_TRUE(c.received().starts_with("HTTP/1.1 200 OK\r\n")) << c.received();
  EXPECT_NE(c.received().find("Transfer-Encoding: chunked\r\n"), std::string::npos);
  EXPECT_EQ(stream->push(std::make_shared<const std::string>("data: 1\n\n")), push_result::queued);
  ASSERT_TRUE(c.read_until("data: 1\n\n"));
  EXPECT_EQ(stream->push(std::make_shared<const std::string>("data: 2\n\n")), push_result::queued);
  stream->end("event: closing\n\n");
  ASSERT_TRUE(c.closed_by_server());
  const std::string& all = c.received();
  EXPECT_NE(all.find("data: 2\n\n"), std::string::npos) << all;
  EXPECT_NE(all.find("event: closing\n\n"), std::string::npos) << all;
  EXPECT_TRUE(all.ends_with("0\r\n\r\n")) << all;  // the chunked body's end
  EXPECT_TRUE(eventually([&] { return kept->ended.load(); }));
  EXPECT_EQ(stream->push(std::make_shared<const std::string>("late")), push_result::ended);
}

// A producer on another thread may push before the handler that opened the stream has
// returned: what it pushes then comes after the head and what the handler pushed, not
// lost (a post from the io thread itself runs only once its handler returns, so the
// chunk from the other thread would otherwise come before the stream is open).
TEST(HttpServer, KeepsAChunkPushedFromAnotherThreadBeforeTheHandlerReturns) {
  router r;
  r.add("GET", "/events", [](request, responder done) {
    response head;
    head.content_type = "text/event-stream";
    auto s = done.stream(std::move(head));
    (void)s->push(std::make_shared<const std::string>(": open\n\n"));
    std::thread([s] { (void)s->push(std::make_shared<const std::string>("data: 1\n\n")); }).join();
    (void)s->push(std::make_shared<const std::string>("data: 2\n\n"));
    s->end("event: closing\n\n");
  });
  server s("127.0.0.1:0", std::move(r), patient());
  raw_client c(s.port());
  ASSERT_TRUE(c.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(c.closed_by_server());
  const std::string& all = c.received();
  const auto open = all.find(": open\n\n");
  const auto one = all.find("data: 1\n\n");
  const auto two = all.find("data: 2\n\n");
  ASSERT_NE(open, std::string::npos) << all;
  ASSERT_NE(one, std::string::npos) << all;
  ASSERT_NE(two, std::string::npos) << all;
  EXPECT_LT(open, one) << all;
  EXPECT_LT(one, two) << all;
  EXPECT_NE(all.find("event: closing\n\n"), std::string::npos) << all;
}

TEST(HttpServer, RefusesAPushOverTheStreamsBudgetAndCutsWithTheLastWords) {
  auto kept = std::make_shared<kept_stream>();
  server_limits l = patient();
  l.max_stream_queue_bytes = 64 * 1024;
  server s("127.0.0.1:0", streaming_routes(kept), l);
  raw_client c(s.port());
  c.shrink_receive_buffer();
  ASSERT_TRUE(c.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n"));
  const auto stream = wait_for_stream(kept);
  // The client reads nothing: the socket's buffers fill, then the stream's budget.
  const auto chunk = std::make_shared<const std::string>(std::string(4096, 'x'));
  bool refused = false;
  for (int i = 0; i < 100'000 && !refused; ++i)
    refused = stream->push(chunk) == push_result::over_budget;
  ASSERT_TRUE(refused);
  EXPECT_LE(stream->queued_bytes(), l.max_stream_queue_bytes);
  stream->cut("event: closing\ndata: slow_client\n\n");
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_NE(c.received().find("data: slow_client"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return kept->ended.load(); }));
}

TEST(HttpServer, EndsTheStreamWhenTheClientLeaves) {
  auto kept = std::make_shared<kept_stream>();
  server s("127.0.0.1:0", streaming_routes(kept), patient());
  {
    raw_client c(s.port());
    ASSERT_TRUE(c.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n"));
    ASSERT_TRUE(c.read_until("\r\n\r\n"));
  }
  EXPECT_TRUE(eventually([&] { return kept->ended.load(); }));
  EXPECT_TRUE(eventually([&] { return s.stats().open.load() == 0; }));
}

TEST(HttpServer, ClosesAStreamWhoseClientStopsReadingAtTheWriteDeadline) {
  auto kept = std::make_shared<kept_stream>();
  server_limits l = patient();
  l.stream_write_timeout = 300ms;
  l.max_stream_queue_bytes = 64 * 1024 * 1024;
  server s("127.0.0.1:0", streaming_routes(kept), l);
  raw_client c(s.port());
  c.shrink_receive_buffer();
  ASSERT_TRUE(c.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n"));
  const auto stream = wait_for_stream(kept);
  const auto chunk = std::make_shared<const std::string>(std::string(64 * 1024, 'x'));
  for (int i = 0; i < 256; ++i) (void)stream->push(chunk);
  EXPECT_TRUE(eventually([&] { return kept->ended.load(); }));
  EXPECT_EQ(s.stats().closed_for(close_reason::stream_stalled), 1U);
}

TEST(HttpServer, ARouteWithItsOwnDeadlineWaitsLongerThanTheServers) {
  router r;
  std::vector<std::thread> workers;
  r.add(
      "GET", "/wait",
      [&workers](request, responder done) {
        workers.emplace_back([done = std::move(done)]() mutable {
          std::this_thread::sleep_for(600ms);
          done(response::text(200, "waited\n"));
        });
      },
      route_options{std::chrono::milliseconds{5000}});
  r.add("GET", "/quick", [](request, responder) {});
  server_limits l = patient();
  l.request_timeout = 200ms;
  {
    server s("127.0.0.1:0", std::move(r), l);
    raw_client c(s.port());
    ASSERT_TRUE(c.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n"));
    EXPECT_TRUE(c.read_response().ends_with("waited\n"));
  }
  for (auto& w : workers) w.join();
}

TEST(HttpServer, CountsAnswersByRouteAndStatus) {
  server s("127.0.0.1:0", plain_routes(), patient());
  raw_client c(s.port());
  for (const char* path : {"/ok", "/ok", "/nowhere"}) {
    ASSERT_TRUE(c.send(std::string("GET ") + path + " HTTP/1.1\r\nHost: t\r\n\r\n"));
    (void)c.read_response();
  }
  const auto& routes = s.stats().routes;
  ASSERT_EQ(routes.size(), 3U);  // /ok, /echo, then what no route took
  EXPECT_EQ(routes[0]->pattern, "/ok");
  EXPECT_EQ(routes[0]->by_status[0].load(), 2U);  // 200
  EXPECT_EQ(routes[2]->pattern, "unmatched");
  std::uint64_t not_found = 0;
  for (std::size_t i = 0; i < counted_statuses.size(); ++i)
    if (counted_statuses[i] == 404) not_found = routes[2]->by_status[i].load();
  EXPECT_EQ(not_found, 1U);
  EXPECT_EQ(routes[0]->latency.bucket(latency_bounds.size()), 0U);
}

TEST(HttpServer, WordsItsOwnAnswersAsTheRouterSays) {
  router r = plain_routes();
  r.on_refusal([](unsigned status, std::string_view code, std::string_view) {
    response j;
    j.status = status;
    j.content_type = "application/json";
    j.body = "{\"code\":\"" + std::string(code) + "\"}";
    return j;
  });
  server s("127.0.0.1:0", std::move(r), patient());
  raw_client c(s.port());
  ASSERT_TRUE(c.send("GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_TRUE(c.read_response().ends_with("{\"code\":\"not_found\"}"));
}

TEST(HttpServer, ServesTlsWithOpenSslAndCountsAFailedHandshake) {
  const std::string dir = ::testing::TempDir();
  const auto made = test::run_command(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
      "-subj /CN=localhost -keyout " +
      dir + "/http.key -out " + dir + "/http.crt");
  ASSERT_EQ(made.exit_code, 0) << made.out;
  net::tls_settings t;
  t.cert_file = dir + "/http.crt";
  t.key_file = dir + "/http.key";
  std::string error;
  auto context = net::tls_server_context::load(t, error);
  ASSERT_TRUE(context) << error;
  auto tls = std::make_shared<net::tls_context_source>(t, std::move(context));
  server s("127.0.0.1:0", plain_routes(), patient(), nullptr, 1, tls);
  const std::string url = "https://localhost:" + std::to_string(s.port());
  for (int i = 0; i < 2; ++i) {  // the second on a context made once
    const auto r =
        test::run_command("curl -s --cacert " + dir + "/http.crt " + url + "/ok " + url + "/ok");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "ok\nok\n");
  }
  // Plain HTTP on the TLS port is no handshake.
  raw_client c(s.port());
  ASSERT_TRUE(c.send(get_ok));
  ASSERT_TRUE(c.closed_by_server());
  EXPECT_TRUE(eventually([&] { return s.stats().closed_for(close_reason::tls_handshake) == 1; }));
}

TEST(HttpServer, NamesATakenAddressAsInUse) {
  server first("127.0.0.1:0", plain_routes());
  const std::string address = "127.0.0.1:" + std::to_string(first.port());
  try {
    server second(address, plain_routes());
    FAIL() << "a second server listened on " << address;
  } catch (const listen_error& e) {
    EXPECT_TRUE(e.in_use());
    EXPECT_EQ(std::string(e.what()), address + " is in use by another listener");
  }
}

TEST(HttpServer, ListensOnAHostName) {
  // Resolved once, at start; which of its addresses comes first is the resolver's.
  server s("localhost:0", plain_routes(), patient());
  EXPECT_NE(s.port(), 0);
}

}  // namespace
}  // namespace tgw::infra::http
