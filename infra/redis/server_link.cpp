#include "infra/redis/server_link.hpp"

#include <sys/time.h>

#include <hiredis/hiredis.h>

namespace tgw::infra::redis {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

value convert(const redisReply* r) {
  value v;
  if (r == nullptr) return v;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      v.type = value::kind::integer;
      v.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      v.type = value::kind::string;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      v.type = value::kind::status;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      v.type = value::kind::error;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      v.type = value::kind::array;
      v.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) v.elements.push_back(convert(r->element[i]));
      break;
    default:
      break;
  }
  return v;
}

value not_connected() {
  return value::make_error("IO not connected");
}

}  // namespace

void server_link::close() noexcept {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

bool server_link::open(const endpoint& target, std::string_view label, std::string& error) {
  close();
  const timeval connect_tv = to_timeval(settings_.connect_timeout);
  redisContext* c = target.unix_socket.empty()
                        ? redisConnectWithTimeout(target.host.c_str(), target.port, connect_tv)
                        : redisConnectUnixWithTimeout(target.unix_socket.c_str(), connect_tv);
  if (c == nullptr) {
    error = "cannot allocate a Redis context";
    return false;
  }
  if (c->err != 0) {
    error = "connect to " + std::string(label) + ": " + c->errstr;
    redisFree(c);
    return false;
  }
  redisSetTimeout(c, to_timeval(settings_.io_timeout));
  if (target.unix_socket.empty()) redisEnableKeepAlive(c);
  ctx_ = c;

  auto check = [&](const value& v, std::string_view what) {
    if (!v.is_error()) return true;
    error = std::string(what) + " on " + std::string(label) + ": " + v.text;
    close();
    return false;
  };
  if (!target.password.empty()) {
    const value v = target.user.empty() ? command({"AUTH", target.password})
                                        : command({"AUTH", target.user, target.password});
    if (!check(v, "AUTH")) return false;
  }
  if (target.db != 0) {
    const std::string db = std::to_string(target.db);
    if (!check(command({"SELECT", db}), "SELECT")) return false;
  }
  if (!settings_.client_name.empty())
    if (!check(command({"CLIENT", "SETNAME", settings_.client_name}), "CLIENT SETNAME"))
      return false;
  return true;
}

// A master demoted to replica answers writes with -READONLY and keeps the socket
// open: without this, a client would stay on it for ever. Reconnecting finds the new
// master through the sentinels, the slot map, or a name that moved (a managed Redis's
// primary endpoint).
void server_link::close_if_demoted(const value& reply) noexcept {
  if (reply.is_error() && reply.text.starts_with("READONLY")) close();
}

value server_link::io_failure() {
  value v = value::make_error(std::string("IO ") + (ctx_ != nullptr ? ctx_->errstr : "error"));
  close();
  return v;
}

value server_link::command(std::span<const std::string_view> argv) {
  if (ctx_ == nullptr) return not_connected();
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lengths;
  ptrs.reserve(argv.size());
  lengths.reserve(argv.size());
  for (std::string_view a : argv) {
    ptrs.push_back(a.data());
    lengths.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lengths.data()));
  if (reply == nullptr) return io_failure();
  value v = convert(reply);
  freeReplyObject(reply);
  close_if_demoted(v);
  return v;
}

std::vector<value> server_link::pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (ctx_ == nullptr) return std::vector<value>(commands.size(), not_connected());
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lengths;
  for (const auto& argv : commands) {
    ptrs.clear();
    lengths.clear();
    for (const std::string& a : argv) {
      ptrs.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lengths.data()) !=
        REDIS_OK)
      return std::vector<value>(commands.size(), io_failure());
  }
  return receive_replies(commands.size());
}

bool server_link::send_encoded(std::string_view commands, std::string& error) {
  if (ctx_ == nullptr) {
    error = not_connected().text;
    return false;
  }
  if (redisAppendFormattedCommand(ctx_, commands.data(), commands.size()) != REDIS_OK) {
    error = io_failure().text;
    return false;
  }
  // What redisGetReply would do before its first read: write until the buffer is out.
  int done = 0;
  while (done == 0)
    if (redisBufferWrite(ctx_, &done) != REDIS_OK) {
      error = io_failure().text;
      return false;
    }
  return true;
}

std::vector<value> server_link::receive_replies(std::size_t count) {
  std::vector<value> replies;
  if (ctx_ == nullptr) return std::vector<value>(count, not_connected());
  replies.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK) {
      const value failure = io_failure();
      replies.resize(count, failure);
      return replies;
    }
    auto* reply = static_cast<redisReply*>(raw);
    replies.push_back(convert(reply));
    freeReplyObject(reply);
  }
  // After every reply is read: closing the context earlier would lose the rest.
  for (const value& v : replies) close_if_demoted(v);
  return replies;
}

}  // namespace tgw::infra::redis
