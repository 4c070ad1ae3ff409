#include "infra/redis/connection.hpp"

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

}  // namespace

std::optional<std::int64_t> value::as_int() const {
  if (type == kind::integer) return integer;
  if (type != kind::string || text.empty()) return std::nullopt;
  std::int64_t n = 0;
  bool negative = false;
  std::size_t i = 0;
  if (text[0] == '-') {
    negative = true;
    i = 1;
    if (text.size() == 1) return std::nullopt;
  }
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    n = n * 10 + (text[i] - '0');
  }
  return negative ? -n : n;
}

connection::connection(options opts) : opts_(std::move(opts)) {}

connection::~connection() {
  disconnect();
}

void connection::disconnect() noexcept {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

bool connection::ensure_connected(std::string& error) {
  if (ctx_ != nullptr) return true;
  const timeval connect_tv = to_timeval(opts_.connect_timeout);
  redisContext* c =
      opts_.where.unix_socket.empty()
          ? redisConnectWithTimeout(opts_.where.host.c_str(), opts_.where.port, connect_tv)
          : redisConnectUnixWithTimeout(opts_.where.unix_socket.c_str(), connect_tv);
  if (c == nullptr) {
    error = "cannot allocate a Redis context";
    return false;
  }
  if (c->err != 0) {
    error = "connect to " + opts_.where.describe() + ": " + c->errstr;
    redisFree(c);
    return false;
  }
  redisSetTimeout(c, to_timeval(opts_.io_timeout));
  if (opts_.where.unix_socket.empty()) redisEnableKeepAlive(c);
  ctx_ = c;

  auto check = [&](const value& v, std::string_view what) {
    if (!v.is_error()) return true;
    error = std::string(what) + " on " + opts_.where.describe() + ": " + v.text;
    disconnect();
    return false;
  };
  if (!opts_.where.password.empty()) {
    const value v = opts_.where.user.empty()
                        ? command({"AUTH", opts_.where.password})
                        : command({"AUTH", opts_.where.user, opts_.where.password});
    if (!check(v, "AUTH")) return false;
  }
  if (opts_.where.db != 0) {
    const std::string db = std::to_string(opts_.where.db);
    if (!check(command({"SELECT", db}), "SELECT")) return false;
  }
  if (!opts_.client_name.empty())
    if (!check(command({"CLIENT", "SETNAME", opts_.client_name}), "CLIENT SETNAME")) return false;
  return true;
}

value connection::io_failure() {
  value v = value::make_error(std::string("IO ") + (ctx_ != nullptr ? ctx_->errstr : "error"));
  disconnect();
  return v;
}

value connection::run(int argc, const char** argv, const std::size_t* lengths) {
  std::string error;
  if (!ensure_connected(error)) return value::make_error("IO " + error);
  auto* reply = static_cast<redisReply*>(redisCommandArgv(ctx_, argc, argv, lengths));
  if (reply == nullptr) return io_failure();
  value v = convert(reply);
  freeReplyObject(reply);
  return v;
}

value connection::command(std::span<const std::string_view> argv) {
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lengths;
  ptrs.reserve(argv.size());
  lengths.reserve(argv.size());
  for (std::string_view a : argv) {
    ptrs.push_back(a.data());
    lengths.push_back(a.size());
  }
  return run(static_cast<int>(argv.size()), ptrs.data(), lengths.data());
}

value connection::command(const std::vector<std::string>& argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  return command(std::span<const std::string_view>(views));
}

std::vector<value> connection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  std::vector<value> replies;
  std::string error;
  if (!ensure_connected(error)) {
    replies.assign(commands.size(), value::make_error("IO " + error));
    return replies;
  }
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
        REDIS_OK) {
      replies.assign(commands.size(), io_failure());
      return replies;
    }
  }
  return read_replies(commands.size());
}

std::vector<value> connection::pipeline_encoded(std::string_view commands, std::size_t count) {
  std::vector<value> replies;
  std::string error;
  if (!ensure_connected(error)) {
    replies.assign(count, value::make_error("IO " + error));
    return replies;
  }
  if (redisAppendFormattedCommand(ctx_, commands.data(), commands.size()) != REDIS_OK) {
    replies.assign(count, io_failure());
    return replies;
  }
  return read_replies(count);
}

std::vector<value> connection::read_replies(std::size_t count) {
  std::vector<value> replies;
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
  return replies;
}

}  // namespace tgw::infra::redis
