#include "infra/redis/sentinel_watch.hpp"

#include <sys/socket.h>

#include <chrono>
#include <map>

#include <hiredis/hiredis.h>

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
  {
    const std::lock_guard lock(context_mutex_);
    if (listening_ != nullptr) ::shutdown(listening_->fd, SHUT_RDWR);
  }
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
// ends. True if the subscription was made.
bool sentinel_watch::listen(const host_port& sentinel, bool first) {
  const timeval connect_timeout{1, 0};
  redisContext* c = redisConnectWithTimeout(sentinel.host.c_str(), sentinel.port, connect_timeout);
  if (c == nullptr) return false;
  if (c->err != 0) {
    redisFree(c);
    return false;
  }
  // Blocks until a message or the destructor's shutdown(); keep-alive finds a sentinel
  // that vanished without closing.
  redisEnableKeepAlive(c);
  {
    const std::lock_guard lock(context_mutex_);
    if (stopping_.load()) {
      redisFree(c);
      return false;
    }
    listening_ = c;
  }
  auto* reply = static_cast<redisReply*>(redisCommand(c, "SUBSCRIBE +switch-master"));
  const bool subscribed = reply != nullptr && reply->type == REDIS_REPLY_ARRAY;
  if (reply != nullptr) freeReplyObject(reply);
  // A switch may have happened while nobody listened: let connections check.
  if (subscribed && !first) epoch_.fetch_add(1, std::memory_order_acq_rel);
  while (subscribed && !stopping_.load()) {
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK) break;
    auto* message = static_cast<redisReply*>(raw);
    // ["message", "+switch-master", "<name> <old ip> <old port> <new ip> <new port>"]
    if (message->type == REDIS_REPLY_ARRAY && message->elements == 3 &&
        message->element[2]->type == REDIS_REPLY_STRING) {
      const std::string text(message->element[2]->str, message->element[2]->len);
      if (text.starts_with(where_.master_name + " "))
        epoch_.fetch_add(1, std::memory_order_acq_rel);
    }
    freeReplyObject(message);
  }
  {
    const std::lock_guard lock(context_mutex_);
    listening_ = nullptr;
  }
  redisFree(c);
  return subscribed;
}

}  // namespace tgw::infra::redis
