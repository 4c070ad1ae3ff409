#include "tests/support/redis_cluster.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "tests/support/redis_server.hpp"
#include "tests/support/redis_tls.hpp"

namespace tgw::test {
namespace {

using namespace std::chrono_literals;

bool can_bind(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// A node needs its port and the cluster bus port 10000 above it.
std::uint16_t free_node_port() {
  for (int i = 0; i < 200; ++i) {
    const std::uint16_t p = free_port();
    if (p <= 55535 && can_bind(static_cast<std::uint16_t>(p + 10000))) return p;
  }
  throw std::runtime_error("no free port pair for a cluster node");
}

bool wait_until(auto done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

}  // namespace

redis_cluster::redis_cluster(std::size_t masters, bool tls) : masters_(masters), tls_(tls) {
  char tmpl[] = "/tmp/tgw-cluster-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  // A port found free can be taken by another process before the node binds it (test
  // binaries start clusters side by side): start again on fresh ports.
  std::string why;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (start(why)) return;
    stop_all();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  throw std::runtime_error(why);
}

void redis_cluster::stop_all() noexcept {
  for (const int pid : pids_) {
    if (pid <= 0) continue;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  pids_.clear();
  ports_.clear();
}

bool redis_cluster::start(std::string& why) {
  std::vector<std::string> create = {"redis-cli"};
  if (tls_) create.insert(create.end(), {"--tls", "--cacert", redis_tls_files::shared().ca.cert});
  create.insert(create.end(), {"--cluster", "create"});
  for (std::size_t i = 0; i < masters_ * 2; ++i) {
    const std::uint16_t port = free_node_port();
    const std::string p = std::to_string(port);
    std::vector<std::string> argv = {"redis-server",
                                     "--port",
                                     p,
                                     "--bind",
                                     "127.0.0.1",
                                     "--dir",
                                     dir_,
                                     "--cluster-enabled",
                                     "yes",
                                     "--cluster-config-file",
                                     "nodes-" + p + ".conf",
                                     "--cluster-node-timeout",
                                     "1000",
                                     "--cluster-replica-validity-factor",
                                     "0",
                                     "--cluster-require-full-coverage",
                                     "no",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no"};
    if (tls_) {
      const auto tls = redis_tls_files::shared().server_args(port);
      argv.insert(argv.end(), tls.begin(), tls.end());
    }
    pids_.push_back(spawn_process(argv, dir_ + "/redis-" + p + ".log"));
    ports_.push_back(port);
    create.push_back("127.0.0.1:" + p);
  }
  for (const std::uint16_t port : ports_) {
    if (!wait_until([&] { return node(port).command({"PING"}).text == "PONG"; }, 5s)) {
      why = "cluster node " + std::to_string(port) + " did not start";
      return false;
    }
  }
  create.insert(create.end(), {"--cluster-replicas", "1", "--cluster-yes"});
  const int creator = spawn_process(create, dir_ + "/create.log");
  int status = 0;
  ::waitpid(creator, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = "redis-cli --cluster create failed; see " + dir_ + "/create.log";
    return false;
  }
  if (!wait_until([&] { return healthy(); }, 30s)) {
    why = "the cluster did not reach cluster_state:ok";
    return false;
  }
  // cluster_state:ok comes before the replicas have synced: wait for every link.
  auto replicated = [&] {
    for (const std::uint16_t port : ports_) {
      const auto role = node(port).command({"ROLE"});
      if (!role.is_array() || role.elements.empty()) return false;
      if (role.elements[0].text == "master" &&
          (role.elements.size() < 3 || role.elements[2].elements.empty()))
        return false;
      if (role.elements[0].text == "slave" &&
          (role.elements.size() < 4 || role.elements[3].text != "connected"))
        return false;
    }
    return true;
  };
  if (!wait_until(replicated, 30s)) {
    why = "the cluster's replicas did not connect to their masters";
    return false;
  }
  return true;
}

redis_cluster::~redis_cluster() {
  stop_all();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string redis_cluster::url() const {
  std::string out = tls_ ? "rediss+cluster://" : "redis+cluster://";
  for (std::size_t i = 0; i < masters_; ++i)
    out += (i > 0 ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports_[i]);
  return out;
}

infra::redis::endpoint redis_cluster::endpoint() const {
  infra::redis::endpoint e;
  for (std::size_t i = 0; i < masters_; ++i) e.cluster_nodes.push_back({"127.0.0.1", ports_[i]});
  e.host = "127.0.0.1";
  e.port = ports_[0];
  if (tls_) e.tls = redis_tls_files::shared().client();
  return e;
}

std::string redis_cluster::tls_flags() const {
  return tls_ ? redis_tls_files::shared().flags() : std::string();
}

infra::redis::connection redis_cluster::node(std::uint16_t port) const {
  infra::redis::endpoint e;
  e.host = "127.0.0.1";
  e.port = port;
  if (tls_) e.tls = redis_tls_files::shared().client();
  return infra::redis::connection({e, tls_ ? 1000ms : 500ms, 2000ms, "test"});
}

std::uint16_t redis_cluster::master_of(std::uint16_t slot) const {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (pids_[i] <= 0) continue;
    const auto slots = node(ports_[i]).command({"CLUSTER", "SLOTS"});
    if (!slots.is_array()) continue;
    for (const auto& range : slots.elements)
      if (range.elements.size() >= 3 && range.elements[0].integer <= slot &&
          slot <= range.elements[1].integer)
        return static_cast<std::uint16_t>(range.elements[2].elements.at(1).integer);
  }
  return 0;
}

void redis_cluster::kill(std::uint16_t port) {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i] != port || pids_[i] <= 0) continue;
    ::kill(pids_[i], SIGKILL);
    int status = 0;
    ::waitpid(pids_[i], &status, 0);
    pids_[i] = -1;
  }
}

void redis_cluster::flush() const {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (pids_[i] <= 0) continue;
    auto c = node(ports_[i]);
    // A replica refuses (READONLY) and follows its master's flush.
    if (c.command({"FLUSHALL", "SYNC"}).is_error()) continue;
    c.command({"WAIT", "1", "2000"});
  }
}

bool redis_cluster::healthy() const {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (pids_[i] <= 0) continue;
    const auto info = node(ports_[i]).command({"CLUSTER", "INFO"});
    if (info.text.find("cluster_state:ok") == std::string::npos) return false;
  }
  return true;
}

unserved_slot::unserved_slot(const redis_cluster& cluster, std::uint16_t slot)
    : cluster_(cluster), owner_(cluster.master_of(slot)), slot_(slot) {
  taken_ =
      owner_ != 0 &&
      cluster_.node(owner_).command({"CLUSTER", "DELSLOTS", std::to_string(slot)}).text == "OK";
}

bool unserved_slot::serve_again() {
  if (!taken_) return true;
  taken_ =
      cluster_.node(owner_).command({"CLUSTER", "ADDSLOTS", std::to_string(slot_)}).text != "OK";
  return !taken_;
}

}  // namespace tgw::test
