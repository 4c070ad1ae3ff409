// The application API end to end: a real `tgw serve` and `tgw api` on redis-server (or,
// in api_cluster_test, on the 3+3 Redis Cluster of redis_backend), devices as raw
// sockets that answer commands, and the API's answers read as bytes. Waits poll up to a
// deadline; nothing asserts on how long anything took.
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "infra/registry/registry_keys.hpp"
#include "tests/infra/api/api_process.hpp"
#include "tests/support/api_response_log.hpp"
#include "tests/support/gateway_process.hpp"
#include "tests/support/raw_http_client.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

/// A device on a gateway that answers every command with `reply` (its bytes as they
/// are), counting the commands it received.
class answering_device {
 public:
  answering_device(std::uint16_t port, std::string imei, std::string reply)
      : socket_(port), imei_(std::move(imei)), reply_(std::move(reply)) {
    socket_.send(handshake_packet(imei_));
    accepted_ = socket_.receive(1) == bytes{0x01};
    thread_ = std::thread([this] {
      while (!stop_) {
        const auto text = receive_command(socket_);
        if (!text) continue;
        {
          const std::lock_guard lock(mutex_);
          received_.push_back(*text);
        }
        answer_command(socket_, reply_);
      }
    });
  }
  ~answering_device() {
    stop_ = true;
    thread_.join();
  }
  [[nodiscard]] bool accepted() const { return accepted_; }
  [[nodiscard]] const std::string& imei() const { return imei_; }
  std::vector<std::string> received() {
    const std::lock_guard lock(mutex_);
    return received_;
  }
  /// Sends a packet of `n` records from `t0` and waits for its ACK.
  bool send_records(int n, std::uint64_t t0) {
    const std::lock_guard lock(mutex_);
    socket_.send(codec8e_packet(n, t0));
    return true;
  }

 private:
  device socket_;
  std::string imei_;
  std::string reply_;
  bool accepted_ = false;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::string> received_;
  std::thread thread_;
};

std::string hex_of(const std::string& bytes) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : bytes) {
    out.push_back(digits[static_cast<unsigned char>(c) >> 4U]);
    out.push_back(digits[static_cast<unsigned char>(c) & 0xFU]);
  }
  return out;
}

class ApiEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    gateway_ = start_gateway(backend_, "gw-api-a");
    ASSERT_NE(gateway_.port, 0) << "the gateway did not start";
    tokens_file_ = ::testing::TempDir() + "/api-e2e-tokens-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::remove(tokens_file_.c_str());
    ops_ = add_token(tokens_file_, "backoffice", "read,command,events");
    ASSERT_FALSE(ops_.empty());
    api_ = start_api(backend_, "a", {"--tokens", tokens_file_});
    ASSERT_NE(api_.port, 0) << "tgw api did not start";
  }

  /// One request on a fresh connection to `port`; the answer, logged for the OpenAPI
  /// check under `route`.
  raw_answer call(std::uint16_t port, const std::string& method, const std::string& target,
                  const std::string& route, const std::string& body = {},
                  const std::string& extra = {}, const std::string& token = {}) {
    raw_client c(port);
    std::string raw = method + " " + target + " HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " +
                      (token.empty() ? ops_ : token) + "\r\n" + extra;
    if (!body.empty() || method == "POST")
      raw += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
             "\r\n";
    raw += "\r\n" + body;
    EXPECT_TRUE(c.send(raw));
    const auto a = split_answer(c.read_response(90s));
    log_api_response(method, route, a.status, a.content_type, a.body);
    return a;
  }
  raw_answer call(const std::string& method, const std::string& target, const std::string& route,
                  const std::string& body = {}, const std::string& extra = {}) {
    return call(api_.port, method, target, route, body, extra);
  }

  /// Whether `d` was accepted and its registry entry written: the gateway answers the
  /// IMEI before the entry is written, and a command is routed by that entry (a POST
  /// sent between the two finds the device offline).
  bool ready(const answering_device& d) {
    if (!d.accepted()) return false;
    infra::redis::connection redis = backend_.connect();
    const std::string key = infra::registry::keys::registry_in(backend_.prefix(d.imei()));
    return eventually([&] { return !redis.command({"HGET", key, d.imei()}).is_nil(); });
  }

  redis_backend backend_;
  gateway_process gateway_;
  std::string tokens_file_;
  std::string ops_;
  api_process api_;
};

constexpr const char* imei = "356307042441013";

TEST_F(ApiEndToEnd, PostWaitReturnsTheDevicesReplyByteExact) {
  // A reply with bytes a terminal would act on, and text with a line end.
  const std::string reply = "Ver:03.28.07 GPS:1\r\n";
  answering_device d(gateway_.port, imei, reply);
  ASSERT_TRUE(ready(d));
  const auto a = call("POST", std::string("/v1/devices/") + imei + "/commands?wait=60",
                      "/v1/devices/{imei}/commands", R"({"text":"getver","codec":12})");
  ASSERT_EQ(a.status, 200) << a.body;
  const json j = json::parse(a.body);
  EXPECT_EQ(j["status"], "responded");
  EXPECT_EQ(j["response"], reply);
  EXPECT_EQ(j["response_hex"], hex_of(reply));
  EXPECT_EQ(j["publisher"], "backoffice");
  EXPECT_EQ(j["text"], "getver");
  EXPECT_NE(a.headers.find("Location: /v1/commands/" + j["command_id"].get<std::string>()),
            std::string::npos)
      << a.headers;
  EXPECT_EQ(d.received(), std::vector<std::string>{"getver"});
  // The command is found by its id, and in the device's history with its publisher.
  const auto by_id =
      call("GET", "/v1/commands/" + j["command_id"].get<std::string>(), "/v1/commands/{id}");
  ASSERT_EQ(by_id.status, 200) << by_id.body;
  EXPECT_EQ(json::parse(by_id.body)["response_hex"], hex_of(reply));
  const auto history =
      call("GET", std::string("/v1/devices/") + imei + "/commands", "/v1/devices/{imei}/commands");
  ASSERT_EQ(history.status, 200) << history.body;
  const json h = json::parse(history.body);
  ASSERT_EQ(h["commands"].size(), 1U);
  EXPECT_EQ(h["commands"][0]["publisher"], "backoffice");
  EXPECT_EQ(h["commands"][0]["status"], "responded");
}

TEST_F(ApiEndToEnd, AReplyThatIsNoTextComesAsItsBytes) {
  const std::string reply("\xc5\x01\x1b[2J\xff\x00Z", 8);
  answering_device d(gateway_.port, imei, reply);
  ASSERT_TRUE(ready(d));
  const auto a = call("POST", std::string("/v1/devices/") + imei + "/commands?wait=60",
                      "/v1/devices/{imei}/commands", R"({"text":"getrs232"})");
  ASSERT_EQ(a.status, 200) << a.body;
  const json j = json::parse(a.body);
  EXPECT_TRUE(j["response"].is_null());
  EXPECT_EQ(j["response_hex"], hex_of(reply));
}

TEST_F(ApiEndToEnd, WithoutWaitTheAnswerIs202AndLocationLeadsToTheOutcome) {
  answering_device d(gateway_.port, imei, "OK");
  ASSERT_TRUE(ready(d));
  const auto a = call("POST", std::string("/v1/devices/") + imei + "/commands",
                      "/v1/devices/{imei}/commands", R"({"text":"getinfo"})");
  ASSERT_EQ(a.status, 202) << a.body;
  const std::string id = json::parse(a.body)["command_id"];
  EXPECT_TRUE(eventually(
      [&] {
        const auto c = call("GET", "/v1/commands/" + id, "/v1/commands/{id}");
        return c.status == 200 && json::parse(c.body)["status"] == "responded";
      },
      20s));
}

TEST_F(ApiEndToEnd, AnOfflineDeviceFailsAtOnceUnlessQueued) {
  {
    answering_device once(gateway_.port, imei, "x");  // known to Redis from now on
    ASSERT_TRUE(ready(once));
  }
  ASSERT_TRUE(eventually(
      [&] {
        const auto d = call("GET", std::string("/v1/devices/") + imei, "/v1/devices/{imei}");
        return d.status == 200 && json::parse(d.body)["online"] == false;
      },
      20s));
  const auto a = call("POST", std::string("/v1/devices/") + imei + "/commands?wait=60",
                      "/v1/devices/{imei}/commands", R"({"text":"getinfo"})");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(json::parse(a.body)["status"], "failed");
  EXPECT_EQ(json::parse(a.body)["failure_reason"], "socket_closed");
}

TEST_F(ApiEndToEnd, AQueuedCommandCompletesWhenTheDeviceConnects) {
  raw_answer answer;
  std::thread poster([&] {
    answer = call("POST", std::string("/v1/devices/") + imei + "/commands?wait=60",
                  "/v1/devices/{imei}/commands", R"({"text":"getgps","queue_if_offline":true})");
  });
  // The device connects while the request waits (the command queued); its queue is
  // drained to it.
  EXPECT_TRUE(eventually(
      [&] {
        const auto h = call("GET", std::string("/v1/devices/") + imei + "/commands",
                            "/v1/devices/{imei}/commands");
        return h.status == 200 && !json::parse(h.body)["commands"].empty();
      },
      20s));
  answering_device d(gateway_.port, imei, "GPS:1");
  ASSERT_TRUE(ready(d));
  poster.join();
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(json::parse(answer.body)["status"], "responded");
  EXPECT_EQ(json::parse(answer.body)["response"], "GPS:1");
  EXPECT_EQ(d.received(), std::vector<std::string>{"getgps"});
}

TEST_F(ApiEndToEnd, OneIdempotencyKeyReachesTheDeviceOnceWhateverTheRetries) {
  answering_device d(gateway_.port, imei, "done");
  ASSERT_TRUE(ready(d));
  const std::string target = std::string("/v1/devices/") + imei + "/commands?wait=60";
  const std::string route = "/v1/devices/{imei}/commands";
  const std::string body = R"({"text":"setdigout 1"})";
  const std::string key = "Idempotency-Key: 7b0e3c9a-retry-1\r\n";
  // Twice in a row, then four at once, then through a second API instance.
  std::set<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    const auto a = call("POST", target, route, body, key);
    ASSERT_TRUE(a.status == 200 || a.status == 202) << a.body;
    ids.insert(json::parse(a.body)["command_id"].get<std::string>());
  }
  std::vector<std::thread> at_once;
  std::mutex m;
  for (int i = 0; i < 4; ++i)
    at_once.emplace_back([&] {
      const auto a = call("POST", target, route, body, key);
      const std::lock_guard lock(m);
      EXPECT_TRUE(a.status == 200 || a.status == 202) << a.body;
      if (a.status == 200 || a.status == 202)
        ids.insert(json::parse(a.body)["command_id"].get<std::string>());
    });
  for (auto& t : at_once) t.join();
  const auto second = start_api(backend_, "b", {"--tokens", tokens_file_});
  ASSERT_NE(second.port, 0);
  const auto b = call(second.port, "POST", target, route, body, key);
  ASSERT_TRUE(b.status == 200 || b.status == 202) << b.body;
  ids.insert(json::parse(b.body)["command_id"].get<std::string>());
  EXPECT_EQ(ids.size(), 1U);
  EXPECT_EQ(d.received(), std::vector<std::string>{"setdigout 1"});
  // The same key with another body is refused, naming the first command.
  const auto other = call("POST", target, route, R"({"text":"setdigout 0"})", key);
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_NE(other.headers.find("Location: /v1/commands/" + *ids.begin()), std::string::npos);
  EXPECT_EQ(d.received().size(), 1U);
}

TEST_F(ApiEndToEnd, DevicesPageThroughEveryDeviceOnceInImeiOrder) {
  std::vector<std::unique_ptr<answering_device>> fleet;
  std::set<std::string> expected;
  for (int i = 0; i < 7; ++i) {
    const std::string id = "35630704244101" + std::to_string(i);
    fleet.push_back(std::make_unique<answering_device>(gateway_.port, id, "x"));
    ASSERT_TRUE(ready(*fleet.back()));
    expected.insert(id);
  }
  std::vector<std::string> seen;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    const auto a = call("GET", "/v1/devices?limit=3" + (cursor.empty() ? "" : "&cursor=" + cursor),
                        "/v1/devices");
    ASSERT_EQ(a.status, 200) << a.body;
    const json j = json::parse(a.body);
    for (const auto& d : j["devices"]) {
      seen.push_back(d["imei"]);
      EXPECT_EQ(d["online"], true);
      EXPECT_EQ(d["instance"], "gw-api-a");
      EXPECT_TRUE(d["connected_ms"].is_string());
    }
    if (j["next_cursor"].is_null()) break;
    cursor = j["next_cursor"];
  }
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), expected);
  EXPECT_EQ(seen.size(), expected.size());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  const auto online = call("GET", "/v1/devices?online=false", "/v1/devices");
  EXPECT_EQ(json::parse(online.body)["devices"].size(), 0U);
}

TEST_F(ApiEndToEnd, RecordsOfOneDeviceComeOldestFirstWithTimesAsStrings) {
  answering_device d(gateway_.port, imei, "x");
  answering_device other(gateway_.port, "356307042441014", "x");
  ASSERT_TRUE(ready(d) && ready(other));
  d.send_records(3, 1700000000000);
  other.send_records(2, 1700000100000);
  ASSERT_TRUE(eventually(
      [&] {
        const auto a = call("GET", std::string("/v1/devices/") + imei + "/records",
                            "/v1/devices/{imei}/records");
        return a.status == 200 && json::parse(a.body)["records"].size() == 3;
      },
      20s));
  const auto a = call("GET", std::string("/v1/devices/") + imei + "/records?limit=2",
                      "/v1/devices/{imei}/records");
  const json j = json::parse(a.body);
  ASSERT_EQ(j["records"].size(), 2U);
  EXPECT_EQ(j["records"][0]["ts"], "1700000000000");
  EXPECT_EQ(j["records"][0]["time"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(j["records"][1]["ts"], "1700000001000");
  ASSERT_TRUE(j["next_cursor"].is_string());
  const auto rest = call(
      "GET",
      std::string("/v1/devices/") + imei + "/records?cursor=" + j["next_cursor"].get<std::string>(),
      "/v1/devices/{imei}/records");
  const json r = json::parse(rest.body);
  ASSERT_EQ(r["records"].size(), 1U);
  EXPECT_EQ(r["records"][0]["ts"], "1700000002000");
}

/// The events of a chunked text/event-stream, de-chunked and split.
struct sse_event {
  std::string id, type, data;
};

class sse_client {
 public:
  sse_client(std::uint16_t port, const std::string& token, const std::string& query,
             const std::string& last_id = {})
      : c_(port) {
    std::string raw = "GET /v1/events" + query + " HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " +
                      token + "\r\nAccept: text/event-stream\r\n";
    if (!last_id.empty()) raw += "Last-Event-ID: " + last_id + "\r\n";
    EXPECT_TRUE(c_.send(raw + "\r\n"));
  }
  /// Events until `n` have come (or `within` passed).
  std::vector<sse_event> next(std::size_t n, std::chrono::milliseconds within = 20s) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (events_.size() < n && std::chrono::steady_clock::now() < until) {
      if (!c_.read_more(200ms)) continue;
      feed(c_.received());
    }
    std::vector<sse_event> out(events_.begin(),
                               events_.begin() + static_cast<long>(std::min(n, events_.size())));
    events_.erase(events_.begin(), events_.begin() + static_cast<long>(out.size()));
    return out;
  }

  /// Whether the stream opened (a 200, and the comment the API sends once the client
  /// follows: events written from then on reach it) within `within`.
  bool opened(std::chrono::milliseconds within = 20s) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (!opened_ && std::chrono::steady_clock::now() < until) {
      if (!c_.read_more(200ms)) continue;
      const std::string& got = c_.received();
      if (got.find("\r\n") != std::string::npos && !got.starts_with("HTTP/1.1 200 ")) return false;
      feed(c_.received());
    }
    return opened_;
  }

  /// What came, for a failure's message.
  [[nodiscard]] const std::string& received() const { return c_.received(); }

 private:
  void feed(const std::string& all) {
    raw_ += all.substr(consumed_);
    consumed_ = all.size();
    if (!head_done_) {
      const auto end = raw_.find("\r\n\r\n");
      if (end == std::string::npos) return;
      raw_.erase(0, end + 4);
      head_done_ = true;
    }
    for (;;) {  // chunks: size CRLF data CRLF; a chunk not whole yet waits for more
      const auto line = raw_.find("\r\n");
      if (line == std::string::npos) break;
      const std::size_t size = std::stoul(raw_.substr(0, line), nullptr, 16);
      if (raw_.size() < line + 2 + size + 2) break;
      text_ += raw_.substr(line + 2, size);
      raw_.erase(0, line + 2 + size + 2);
      if (size == 0) break;
    }
    std::size_t end;
    while ((end = text_.find("\n\n")) != std::string::npos) {
      sse_event e;
      std::size_t at = 0;
      const std::string block = text_.substr(0, end);
      text_.erase(0, end + 2);
      while (at < block.size()) {
        const auto nl = block.find('\n', at);
        const std::string l =
            block.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        at = nl == std::string::npos ? block.size() : nl + 1;
        if (l.starts_with("id: ")) e.id = l.substr(4);
        if (l.starts_with("event: ")) e.type = l.substr(7);
        if (l.starts_with("data: ")) e.data = l.substr(6);
        if (l == ": tgw events") opened_ = true;
      }
      if (!e.type.empty()) events_.push_back(e);
    }
  }
  raw_client c_;
  std::size_t consumed_ = 0;
  bool head_done_ = false;
  bool opened_ = false;
  std::string raw_, text_;
  std::vector<sse_event> events_;
};

TEST_F(ApiEndToEnd, EventsResumeFromLastEventIdWithoutAGap) {
  answering_device d(gateway_.port, imei, "x");
  ASSERT_TRUE(ready(d));
  std::string last;
  std::set<std::string> ts;
  {
    sse_client first(api_.port, ops_, std::string("?types=record&imei=") + imei);
    ASSERT_TRUE(first.opened()) << first.received();
    d.send_records(3, 1700000000000);
    const auto got = first.next(3);
    ASSERT_EQ(got.size(), 3U) << first.received();
    for (const auto& e : got) {
      EXPECT_EQ(e.type, "record");
      ts.insert(json::parse(e.data)["ts"].get<std::string>());
    }
    last = got.back().id;
  }
  // Away: records come meanwhile (stored before the client is back), and are sent on
  // reconnection.
  d.send_records(2, 1700000010000);
  ASSERT_TRUE(eventually(
      [&] {
        const auto r =
            call("GET", std::string("/v1/devices/") + imei + "/records?from=2020-01-01T00:00:00Z",
                 "/v1/devices/{imei}/records");
        return r.status == 200 && json::parse(r.body)["records"].size() == 5;
      },
      20s));
  sse_client again(api_.port, ops_, std::string("?types=record&imei=") + imei, last);
  d.send_records(1, 1700000020000);
  const auto got = again.next(3);
  ASSERT_EQ(got.size(), 3U) << again.received();
  for (const auto& e : got) ts.insert(json::parse(e.data)["ts"].get<std::string>());
  EXPECT_EQ(ts, (std::set<std::string>{"1700000000000", "1700000001000", "1700000002000",
                                       "1700000010000", "1700000011000", "1700000020000"}));
}

TEST_F(ApiEndToEnd, EventsTellSessionChangesAndCommandOutcomes) {
  sse_client events(api_.port, ops_, "?types=session,command");
  ASSERT_TRUE(events.opened()) << events.received();
  answering_device d(gateway_.port, imei, "OK");
  ASSERT_TRUE(ready(d));
  const auto a = call("POST", std::string("/v1/devices/") + imei + "/commands?wait=60",
                      "/v1/devices/{imei}/commands", R"({"text":"getinfo"})");
  ASSERT_EQ(a.status, 200) << a.body;
  const auto got = events.next(2);
  ASSERT_EQ(got.size(), 2U) << events.received();
  EXPECT_EQ(got[0].type, "session");
  EXPECT_EQ(json::parse(got[0].data)["type"], "identified");
  EXPECT_EQ(json::parse(got[0].data)["imei"], imei);
  EXPECT_EQ(got[1].type, "command");
  EXPECT_EQ(json::parse(got[1].data)["response"], "OK");
}

TEST_F(ApiEndToEnd, TokensAreReadAgainOnSighup) {
  const std::string later = add_token(tokens_file_, "late", "read");
  ASSERT_FALSE(later.empty());
  EXPECT_EQ(call(api_.port, "GET", "/v1/devices", "/v1/devices", {}, {}, later).status, 401);
  api_.process->signal(SIGHUP);
  EXPECT_TRUE(eventually(
      [&] {
        return call(api_.port, "GET", "/v1/devices", "/v1/devices", {}, {}, later).status == 200;
      },
      10s));
  const auto revoked = run_tgw("api token revoke late --tokens " + tokens_file_);
  EXPECT_EQ(revoked.exit_code, 0) << revoked.out;
  api_.process->signal(SIGHUP);
  EXPECT_TRUE(eventually(
      [&] {
        return call(api_.port, "GET", "/v1/devices", "/v1/devices", {}, {}, later).status == 401;
      },
      10s));
}

TEST_F(ApiEndToEnd, CurlSpeaksToItOverTlsWithTheSameAnswers) {
  const std::string dir = ::testing::TempDir();
  const auto made = run_command(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
      "-nodes -days 1 -subj /CN=localhost -keyout " +
      dir + "/api.key -out " + dir + "/api.crt");
  ASSERT_EQ(made.exit_code, 0) << made.out;
  const auto tls = start_api(
      backend_, "tls",
      {"--tokens", tokens_file_, "--tls-cert", dir + "/api.crt", "--tls-key", dir + "/api.key"});
  ASSERT_NE(tls.port, 0) << "tgw api did not start with TLS";
  const auto r =
      run_command("curl -s --cacert " + dir + "/api.crt -H 'Authorization: Bearer " + ops_ +
                  "' https://localhost:" + std::to_string(tls.port) + "/v1/devices");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"devices\""), std::string::npos) << r.out;
}

TEST_F(ApiEndToEnd, RefusesToStartWithoutTokensOrWithNoAuthAwayFromLoopback) {
  const auto none = run_tgw("api --listen 127.0.0.1:0 --redis " + backend_.url());
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.out.find("no tokens file"), std::string::npos) << none.out;
  const auto open = run_tgw("api --listen 0.0.0.0:0 --no-auth --redis " + backend_.url());
  EXPECT_EQ(open.exit_code, 2) << open.out;
  EXPECT_NE(open.out.find("not a loopback address"), std::string::npos) << open.out;
}

TEST_F(ApiEndToEnd, MetricsCountRequestsByRouteAndStatus) {
  call("GET", "/v1/devices", "/v1/devices");
  call("GET", "/v1/devices/1", "/v1/devices/{imei}");
  const std::string text = http_get(api_.port, "/metrics");
  EXPECT_GE(metric_value(text, "teltonika_http_responses_total{api=\"127.0.0.1:" +
                                   std::to_string(api_.port) +
                                   "\",endpoint=\"api\",method=\"GET\",route=\"/v1/devices\","
                                   "status=\"200\"} "),
            1.0)
      << text;
  EXPECT_GE(metric_value(text, "teltonika_http_responses_total{api=\"127.0.0.1:" +
                                   std::to_string(api_.port) +
                                   "\",endpoint=\"api\",method=\"GET\",route=\"/v1/devices/"
                                   "{imei}\",status=\"400\"} "),
            1.0)
      << text;
}

// An EventSource takes a refusal as final: a client that comes while the API cannot read
// the streams (just started, or Redis away) waits for them, and follows once they are.
TEST(ApiEventsWhileRedisIsAway, AClientWaitsForTheStreamsInsteadOfBeingRefused) {
  if (redis_backend::on_cluster()) GTEST_SKIP() << "stops a single redis-server";
  redis_server redis;
  const std::string tokens = ::testing::TempDir() + "/api-outage-tokens";
  std::remove(tokens.c_str());
  const std::string token = add_token(tokens, "follower", "events");
  ASSERT_FALSE(token.empty());
  const auto api = start_api(redis.url(), "outage", {"--tokens", tokens});
  ASSERT_NE(api.port, 0) << "tgw api did not start";
  redis.stop();
  ASSERT_TRUE(eventually(
      [&] {
        return http_get(api.port, "/readyz").find("event streams cannot be read") !=
               std::string::npos;
      },
      20s))
      << "the reader did not notice that Redis went away";
  sse_client events(api.port, token, "?types=record");
  redis.start();
  EXPECT_TRUE(events.opened()) << events.received();
  EXPECT_TRUE(eventually(
      [&] { return http_get(api.port, "/readyz").find(" 200 ") != std::string::npos; }, 20s));
}

}  // namespace
}  // namespace tgw::test
