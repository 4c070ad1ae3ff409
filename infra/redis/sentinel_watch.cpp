#include "infra/redis/sentinel_watch.hpp"

#include <chrono>
#include <map>
#include <mutex>

#include "infra/redis/server_link.hpp"

namespace tgw::infra::redis {
namespace {

std::string key_of(const endpoint& where) {
  std::string key = where.master_name;
  for (const auto& s : where.sentinels) key += "," + s.host + ":" + std::to_string(s.port);
  return key;
}

}  // namespace

std::shared_ptr<sentinel_watch> sentinel_watch::of(const endpoint& where) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<sentinel_watch>> watches;
  const std::lock_guard lock(mutex);
  auto& slot = watches[key_of(where)];
  auto watch = slot.lock();
  if (!watch) {
    watch = std::make_shared<sentinel_watch>(where);
    slot = watch;
  }
  return watch;
}

sentinel_watch::sentinel_watch(endpoint where)
    : where_(std::move(where)), thread_([this] { run(); }) {}

sentinel_watch::~sentinel_watch() {
  stopping_.store(true);
  thread_.join();
}

void sentinel_watch::run() {
  bool first = true;
  while (!stopping_.load()) {
    for (const host_port& sentinel : where_.sentinels) {
      if (stopping_.load()) return;
      if (listen(sentinel, first)) first = false;
    }
    // No sentinel took the subscription: try them again shortly, without spinning.
    for (int i = 0; i < 10 && !stopping_.load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

// Subscribes on one sentinel and counts switches of our master until the connection
// ends. True if the subscription was made. The wait for a message is cut in short
// slices, so that the destructor is heard within one; keep-alive finds a sentinel that
// vanished without closing.
bool sentinel_watch::listen(const host_port& sentinel, bool first) {
  using std::chrono::milliseconds;
  constexpr milliseconds slice{200};
  endpoint at;
  at.host = sentinel.host;
  at.port = sentinel.port;
  at.tls = where_.tls;
  server_link link({milliseconds{1000}, milliseconds{1000}, ""});
  std::string error;
  if (!link.open(at, at.describe(), error)) return false;
  const value reply = link.command({"SUBSCRIBE", "+switch-master"});
  const bool subscribed = reply.is_array();
  // A switch may have happened while nobody listened: let connections check.
  if (subscribed && !first) epoch_.fetch_add(1, std::memory_order_acq_rel);
  while (subscribed && !stopping_.load()) {
    const std::optional<value> message = link.next_message(slice);
    if (!message) continue;
    if (message->is_error()) break;
    // ["message", "+switch-master", "<name> <old ip> <old port> <new ip> <new port>"]
    if (message->is_array() && message->elements.size() == 3 && message->elements[2].is_string() &&
        message->elements[2].text.starts_with(where_.master_name + " "))
      epoch_.fetch_add(1, std::memory_order_acq_rel);
  }
  return subscribed;
}

}  // namespace tgw::infra::redis
