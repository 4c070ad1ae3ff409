// Whole `tgw node` processes against a real redis-server: election, failover after
// SIGKILL, removal of a paused node, a paused emitter that wakes up, clean leave on
// SIGTERM, --getErrors, and bad flags. Waits poll Redis up to a deadline; nothing
// here asserts on how long anything took.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <thread>

#include "infra/node/node_keys.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;
namespace keys = infra::node::keys;

struct message_fields {
  long long id = 0;
  std::string emitter;
  long long epoch = 0;
};

// Messages are "id:emitter:epoch:time_ms".
message_fields parse_message(const std::string& m) {
  message_fields f;
  const auto a = m.find(':');
  const auto b = m.find(':', a + 1);
  const auto c = m.find(':', b + 1);
  f.id = std::stoll(m.substr(0, a));
  f.emitter = m.substr(a + 1, b - a - 1);
  f.epoch = std::stoll(m.substr(b + 1, c - b - 1));
  return f;
}

class NodeCluster : public ::testing::Test {
 protected:
  child_process start_node(const std::string& id, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {TGW_BINARY,  "node", "--rport",         port(),
                                     "--id",      id,     "--interval",      "50",
                                     "--work-ms", "5",    "--record-handled"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return child_process(argv, log_dir() + "/" + id + ".log");
  }
  std::string port() const { return std::to_string(server.port()); }
  static std::string log_dir() { return ::testing::TempDir(); }
  std::string get(const char* key) { return redis.command({"GET", key}).text; }
  std::vector<std::string> ids() {
    std::vector<std::string> out;
    for (const auto& e : redis.command({"LRANGE", keys::ids, "0", "-1"}).elements)
      out.push_back(e.text);
    return out;
  }
  bool registered(const std::string& id) {
    return redis.command({"HEXISTS", keys::list, id}).integer == 1;
  }

  redis_server server;
  infra::redis::connection redis = server.connect();
};

TEST_F(NodeCluster, RegistersAndElectsTheFirstNode) {
  auto a = start_node("a");
  ASSERT_TRUE(eventually([&] { return get(keys::emitter) == "a"; }));
  auto b = start_node("b");
  ASSERT_TRUE(eventually([&] { return registered("b"); }));
  EXPECT_EQ(ids(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(get(keys::emitter), "a");
  // The worker handles what the emitter emits.
  EXPECT_TRUE(eventually([&] { return redis.command({"HLEN", keys::handled}).integer > 3; }));
  for (const char* key : {keys::list, keys::ids, keys::emitter}) {
    const auto ttl = redis.command({"PTTL", key}).integer;
    EXPECT_GT(ttl, 0) << key;
    EXPECT_LE(ttl, 10000) << key;
  }
}

TEST_F(NodeCluster, KillingTheEmitterHandsTheLeaseToTheFirstRemainingNode) {
  auto a = start_node("a");
  ASSERT_TRUE(eventually([&] { return get(keys::emitter) == "a"; }));
  auto b = start_node("b");
  ASSERT_TRUE(eventually([&] { return registered("b"); }));
  auto c = start_node("c");  // after b, so the registration order is a, b, c
  ASSERT_TRUE(eventually([&] { return registered("c"); }));
  a.signal(SIGKILL);
  ASSERT_TRUE(eventually([&] { return get(keys::emitter) == "b"; }));
  EXPECT_FALSE(registered("a"));
  EXPECT_EQ(ids(), (std::vector<std::string>{"b", "c"}));
  const auto before = redis.command({"GET", keys::sequence}).as_int().value_or(0);
  EXPECT_TRUE(eventually([&] {
    return redis.command({"GET", keys::sequence}).as_int().value_or(0) > before + 2;
  }));
}

TEST_F(NodeCluster, APausedWorkerIsRemovedAndRejoinsWhenResumed) {
  auto a = start_node("a");
  ASSERT_TRUE(eventually([&] { return get(keys::emitter) == "a"; }));
  auto b = start_node("b");
  ASSERT_TRUE(eventually([&] { return registered("b"); }));
  b.signal(SIGSTOP);
  ASSERT_TRUE(eventually([&] { return !registered("b"); }));
  b.signal(SIGCONT);
  ASSERT_TRUE(eventually([&] { return registered("b"); }));
  EXPECT_EQ(get(keys::emitter), "a");
}

TEST_F(NodeCluster, APausedEmitterEmitsNothingAfterItResumes) {
  auto a = start_node("a");
  ASSERT_TRUE(eventually([&] { return get(keys::emitter) == "a"; }));
  auto b = start_node("b");
  ASSERT_TRUE(eventually([&] { return registered("b"); }));
  auto c = start_node("c");
  ASSERT_TRUE(eventually([&] { return registered("c"); }));
  a.signal(SIGSTOP);
  ASSERT_TRUE(eventually([&] { return get(keys::emitter) == "b"; }));
  a.signal(SIGCONT);
  ASSERT_TRUE(eventually([&] { return registered("a"); }));
  std::this_thread::sleep_for(500ms);  // let the woken node try whatever it would
  for (auto* n : {&a, &b, &c}) n->signal(SIGTERM);
  for (auto* n : {&a, &b, &c}) EXPECT_EQ(n->wait(), 0);

  // Every message ever emitted was handled or failed; in id order, the epoch never
  // goes back, and each epoch has exactly one emitter.
  std::map<long long, message_fields> messages;
  for (const auto& e : redis.command({"HKEYS", keys::handled}).elements)
    messages[parse_message(e.text).id] = parse_message(e.text);
  for (const auto& e : redis.command({"LRANGE", keys::errors, "0", "-1"}).elements) {
    const auto start = e.text.find(R"("message":")") + 11;
    const auto m = parse_message(e.text.substr(start, e.text.find('"', start) - start));
    messages[m.id] = m;
  }
  ASSERT_FALSE(messages.empty());
  std::map<long long, std::string> emitter_of_epoch;
  long long last_epoch = 0;
  for (const auto& [id, m] : messages) {
    EXPECT_GE(m.epoch, last_epoch) << "message " << id << " from " << m.emitter;
    last_epoch = m.epoch;
    auto [it, fresh] = emitter_of_epoch.emplace(m.epoch, m.emitter);
    EXPECT_EQ(it->second, m.emitter) << "two emitters at epoch " << m.epoch;
  }
  EXPECT_GE(emitter_of_epoch.size(), 2U);
  for (const auto& e : redis.command({"HVALS", keys::handled}).elements) EXPECT_EQ(e.text, "1");
}

TEST_F(NodeCluster, SigtermLeavesTheClusterAndExitsZero) {
  auto a = start_node("a");
  ASSERT_TRUE(eventually([&] { return registered("a"); }));
  a.signal(SIGTERM);
  EXPECT_EQ(a.wait(), 0);
  EXPECT_FALSE(registered("a"));
  EXPECT_EQ(redis.command({"EXISTS", keys::emitter}).integer, 0);
}

std::pair<int, std::string> run_capture(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(NodeCluster, GetErrorsPrintsTheListAndDeletesIt) {
  redis.command({"RPUSH", keys::errors, R"({"message":"7:a:1:0","node":"b"})", "second"});
  const auto [code, out] =
      run_capture(std::string(TGW_BINARY) + " node --getErrors --rport " + port());
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find(R"({"message":"7:a:1:0","node":"b"})"), std::string::npos) << out;
  EXPECT_NE(out.find("second"), std::string::npos) << out;
  EXPECT_EQ(redis.command({"EXISTS", keys::errors}).integer, 0);
}

TEST_F(NodeCluster, BadFlagsAndUnreachableRedisAreClearErrors) {
  EXPECT_EQ(run_capture(std::string(TGW_BINARY) + " node --error-rate 2").first, 2);
  EXPECT_EQ(run_capture(std::string(TGW_BINARY) + " node --redis http://x").first, 2);
  const auto [code, out] =
      run_capture(std::string(TGW_BINARY) + " node --rport " + std::to_string(free_port()));
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("Connection refused (nothing listens there): Redis is unreachable"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace tgw::test
