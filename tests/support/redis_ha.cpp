#include "tests/support/redis_ha.hpp"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <thread>

#include "tests/support/redis_tls.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

infra::redis::endpoint local(std::uint16_t port, bool tls) {
  infra::redis::endpoint e;
  e.host = "127.0.0.1";
  e.port = port;
  if (tls) e.tls = redis_tls_files::shared().client();
  return e;
}

infra::redis::connection direct(std::uint16_t port, bool tls) {
  // A TLS handshake takes longer than a plain connect on a busy machine.
  return infra::redis::connection({local(port, tls), tls ? 1000ms : 300ms, 1000ms, ""});
}

/// The value of `field` in an INFO section's text, or "".
std::string info_field(const std::string& info, const std::string& field) {
  const auto at = info.find(field + ":");
  if (at == std::string::npos) return "";
  const auto start = at + field.size() + 1;
  return info.substr(start, info.find_first_of("\r\n", start) - start);
}

}  // namespace

struct redis_ha::node {
  std::uint16_t port = 0;
  bool sentinel = false;
  std::optional<child_process> process;
};

redis_ha::redis_ha(int replicas, bool tls) : tls_(tls) {
  char tmpl[] = "/tmp/tgw-redis-ha-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  for (int i = 0; i <= replicas; ++i) {
    auto n = std::make_unique<node>();
    n->port = free_port();
    data_ports_.push_back(n->port);
    start_data_node(*n, i == 0 ? 0 : data_ports_.front());
    nodes_.push_back(std::move(n));
  }
  for (std::uint16_t port : data_ports_)
    if (port != data_ports_.front() && !wait_for_replica(port, 10s))
      throw std::runtime_error("replica on port " + std::to_string(port) + " did not sync");
  for (int i = 0; i < 3; ++i) {
    auto n = std::make_unique<node>();
    n->port = free_port();
    n->sentinel = true;
    const std::string conf = dir_ + "/sentinel-" + std::to_string(n->port) + ".conf";
    std::ofstream(conf) << (tls ? redis_tls_files::shared().server_config(n->port)
                                : "port " + std::to_string(n->port) + "\n")
                        << "bind 127.0.0.1\ndir " << dir_ << "\nsentinel monitor " << master_name
                        << " 127.0.0.1 " << data_ports_.front()
                        << " 2\nsentinel down-after-milliseconds " << master_name
                        << " 1000\nsentinel failover-timeout " << master_name
                        << " 3000\nsentinel parallel-syncs " << master_name << " 1\n";
    start_sentinel(*n);
    sentinel_ports_.push_back(n->port);
    nodes_.push_back(std::move(n));
  }
  // Ready when every sentinel knows every replica and the two other sentinels: only
  // then can they agree on a failover.
  const auto ready = [&] {
    for (std::uint16_t port : sentinel_ports_) {
      auto c = direct(port, tls_);
      const auto seen_replicas = c.command({"SENTINEL", "REPLICAS", master_name});
      const auto seen_sentinels = c.command({"SENTINEL", "SENTINELS", master_name});
      if (!seen_replicas.is_array() || !seen_sentinels.is_array() ||
          seen_replicas.elements.size() != static_cast<std::size_t>(replicas) ||
          seen_sentinels.elements.size() != 2)
        return false;
    }
    return true;
  };
  if (!poll_until(ready, 20s)) throw std::runtime_error("sentinels did not discover each other");
}

redis_ha::~redis_ha() {
  nodes_.clear();  // child_process kills each one
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void redis_ha::start_data_node(node& n, std::uint16_t replica_of) {
  std::vector<std::string> argv = {"redis-server",
                                   "--port",
                                   std::to_string(n.port),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_,
                                   "--dbfilename",
                                   "dump-" + std::to_string(n.port) + ".rdb"};
  if (replica_of != 0) {
    argv.insert(argv.end(), {"--replicaof", "127.0.0.1", std::to_string(replica_of)});
  }
  if (tls_) {
    const auto tls = redis_tls_files::shared().server_args(n.port);
    argv.insert(argv.end(), tls.begin(), tls.end());
  }
  n.process.emplace(argv, dir_ + "/redis-" + std::to_string(n.port) + ".log");
  if (!poll_until([&] { return direct(n.port, tls_).command({"PING"}).text == "PONG"; }, 10s))
    throw std::runtime_error("redis-server did not start on port " + std::to_string(n.port));
}

std::string redis_ha::url() const {
  std::string out = tls_ ? "rediss+sentinel://" : "redis+sentinel://";
  for (std::size_t i = 0; i < sentinel_ports_.size(); ++i)
    out += (i > 0 ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(sentinel_ports_[i]);
  return out + "/" + master_name;
}

infra::redis::endpoint redis_ha::endpoint() const {
  std::string error;
  auto e = infra::redis::parse_redis_url(url(), error);
  if (!e) throw std::runtime_error(error);
  if (tls_) e->tls = redis_tls_files::shared().client();
  return *e;
}

std::uint16_t redis_ha::master_port() const {
  for (std::uint16_t port : sentinel_ports_) {
    const auto v = direct(port, tls_).command({"SENTINEL", "get-master-addr-by-name", master_name});
    if (v.is_array() && v.elements.size() == 2)
      return static_cast<std::uint16_t>(v.elements[1].as_int().value_or(0));
  }
  return 0;
}

bool redis_ha::wait_for_new_master(std::uint16_t old_port, std::chrono::milliseconds deadline) {
  return poll_until(
      [&] {
        const std::uint16_t now = master_port();
        if (now == 0 || now == old_port) return false;
        const auto role = direct(now, tls_).command({"ROLE"});
        return role.is_array() && !role.elements.empty() && role.elements[0].text == "master";
      },
      deadline);
}

bool redis_ha::wait_for_replica(std::uint16_t port, std::chrono::milliseconds deadline) {
  return poll_until(
      [&] {
        const auto info = direct(port, tls_).command({"INFO", "replication"});
        return info_field(info.text, "role") == "slave" &&
               info_field(info.text, "master_link_status") == "up";
      },
      deadline);
}

redis_ha::node& redis_ha::find(std::uint16_t port) {
  for (auto& n : nodes_)
    if (n->port == port) return *n;
  throw std::runtime_error("no node on port " + std::to_string(port));
}

void redis_ha::kill(std::uint16_t port) {
  node& n = find(port);
  n.process.reset();  // SIGCONT, SIGKILL, reaped
}

void redis_ha::pause(std::uint16_t port) {
  node& n = find(port);
  if (n.process) n.process->signal(SIGSTOP);
}

void redis_ha::resume(std::uint16_t port) {
  node& n = find(port);
  if (n.process) n.process->signal(SIGCONT);
}

void redis_ha::restart(std::uint16_t port) {
  node& n = find(port);
  n.process.reset();
  if (n.sentinel)
    start_sentinel(n);  // with the configuration it last wrote, stale if it missed a failover
  else
    start_data_node(n, 0);
}

void redis_ha::start_sentinel(node& n) {
  const std::string conf = dir_ + "/sentinel-" + std::to_string(n.port) + ".conf";
  n.process.emplace(std::vector<std::string>{"redis-server", conf, "--sentinel"},
                    dir_ + "/sentinel-" + std::to_string(n.port) + ".log");
  if (!poll_until([&] { return direct(n.port, tls_).command({"PING"}).text == "PONG"; }, 10s))
    throw std::runtime_error("sentinel did not start on port " + std::to_string(n.port));
}

infra::redis::connection redis_ha::connect(std::uint16_t port) const {
  return direct(port, tls_);
}

}  // namespace tgw::test
