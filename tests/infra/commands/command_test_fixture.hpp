#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "infra/commands/command_publisher.hpp"
#include "infra/commands/command_store.hpp"
#include "infra/registry/registry_store.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::infra::commands::test {

using namespace std::chrono_literals;

/// A real redis-server with helpers to place devices on instances and read back what
/// the command functions wrote.
class CommandFixture : public ::testing::Test {
 protected:
  redis::connection::options where() const {
    // io timeout above the BLOCK times the tests use.
    return {server.endpoint(), 1000ms, 3000ms, "test"};
  }
  command_store store(const std::string& instance) { return command_store(where(), instance); }
  command_publisher publisher() { return command_publisher(where(), 200ms); }

  /// `imei` is held by `instance`; with `alive` the instance has a heartbeat and a
  /// consumer group on its stream, as a running gateway does.
  void place(const std::string& imei, const std::string& instance, bool alive = true) {
    redis.command({"HSET", registry::keys::registry, imei, instance});
    if (!alive) return;
    redis.command({"SET", registry::keys::heartbeat(instance), "1", "EX", "90"});
    redis.command({"XGROUP", "CREATE", keys::outbound(instance), "ingest", "0", "MKSTREAM"});
  }

  /// Every entry of a stream as field maps, oldest first.
  std::vector<std::map<std::string, std::string>> entries(const std::string& key) {
    std::vector<std::map<std::string, std::string>> out;
    const redis::value v = redis.command({"XRANGE", key, "-", "+"});
    for (const redis::value& e : v.elements) {
      std::map<std::string, std::string> m;
      const auto& f = e.elements[1].elements;
      for (std::size_t i = 0; i + 1 < f.size(); i += 2) m[f[i].text] = f[i + 1].text;
      out.push_back(std::move(m));
    }
    return out;
  }
  std::vector<std::map<std::string, std::string>> responses() { return entries(keys::responses); }
  std::int64_t xlen(const std::string& key) { return redis.command({"XLEN", key}).integer; }
  bool exists(const std::string& key) { return redis.command({"EXISTS", key}).integer == 1; }
  std::int64_t pending(const std::string& instance) {
    const redis::value v = redis.command({"XPENDING", keys::outbound(instance), "ingest"});
    return v.is_array() && !v.elements.empty() ? v.elements[0].integer : -1;
  }
  /// Appends a raw entry to an instance's stream (field, value, ...).
  std::string add_raw(const std::string& instance, const std::vector<std::string>& fields) {
    std::vector<std::string> argv = {"XADD", keys::outbound(instance), "*"};
    argv.insert(argv.end(), fields.begin(), fields.end());
    return redis.command(argv).text;
  }
  std::string add_command(const std::string& instance, const std::string& command_id,
                          const std::string& imei, const std::string& expires_at = "0") {
    return add_raw(instance, {"command_id", command_id, "target_imei", imei, "codec", "12",
                              "payload", "getinfo", "expires_at", expires_at});
  }

  tgw::test::redis_server server;
  redis::connection redis = server.connect();
  std::string error;
};

}  // namespace tgw::infra::commands::test
