#include "infra/redis/connection.hpp"

#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "infra/redis/cluster_connection.hpp"
#include "infra/redis/sentinel_watch.hpp"

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

connection::connection(options opts) : opts_(std::move(opts)) {
  if (opts_.where.via_sentinel()) watch_ = sentinel_watch::of(opts_.where);
  if (opts_.where.via_cluster()) cluster_ = std::make_unique<cluster_connection>(opts_);
}

connection::~connection() {
  disconnect();
}

bool connection::connected() const noexcept {
  return cluster_ ? cluster_->connected() : ctx_ != nullptr;
}

void connection::disconnect() noexcept {
  if (cluster_) cluster_->disconnect();
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

std::string connection::server() const {
  if (cluster_) return cluster_->server();
  if (!opts_.where.via_sentinel()) return opts_.where.describe();
  return "master " + opts_.where.master_name + " at " +
         (master_.host.empty() ? std::string("(unknown)")
                               : master_.host + ":" + std::to_string(master_.port));
}

void connection::drop_if_switched() noexcept {
  if (watch_ && ctx_ != nullptr && watch_->epoch() != epoch_) disconnect();
}

bool connection::ensure_connected(std::string& error) {
  if (cluster_) return cluster_->ensure_connected(error);
  drop_if_switched();
  if (ctx_ != nullptr) return true;
  // Read before asking the sentinels: a switch announced after this is seen next time.
  if (watch_) epoch_ = watch_->epoch();
  endpoint target = opts_.where;
  if (target.via_sentinel() && !find_master(target, error)) return false;
  if (!connect_to(target, error)) return false;
  if (!target.via_sentinel()) return true;
  // The sentinels' answer can be stale by a failover; ROLE is the server's own word.
  const value role = command({"ROLE"});
  if (role.is_array() && !role.elements.empty() && role.elements.front().text == "master")
    return true;
  error = server() + ": ROLE says " +
          (role.is_array() && !role.elements.empty() ? role.elements.front().text : role.text) +
          ", not master (a failover in progress?)";
  disconnect();
  return false;
}

// Asks every sentinel and follows the one with the highest configuration epoch: each
// failover raises it, so a sentinel that was down during the last one (and still names
// the old master, which may be back as an empty master until it is reconfigured) is
// outvoted by any that took part. A sentinel that does not know the name is not proof
// that none does.
bool connection::find_master(endpoint& target, std::string& error) {
  const std::string& name = opts_.where.master_name;
  std::string tried;
  bool any_answered = false;
  std::int64_t best_epoch = -1;
  host_port best;
  for (const host_port& sentinel : opts_.where.sentinels) {
    endpoint at;
    at.host = sentinel.host;
    at.port = sentinel.port;
    connection asking({at, opts_.connect_timeout, opts_.connect_timeout, ""});
    const value v = asking.command({"SENTINEL", "MASTER", name});
    const std::string where = sentinel.host + ":" + std::to_string(sentinel.port);
    if (v.is_array()) {
      any_answered = true;
      std::string ip;
      std::int64_t port = 0;
      std::int64_t epoch = -1;
      for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2) {
        const std::string& field = v.elements[i].text;
        if (field == "ip") ip = v.elements[i + 1].text;
        if (field == "port") port = v.elements[i + 1].as_int().value_or(0);
        if (field == "config-epoch") epoch = v.elements[i + 1].as_int().value_or(-1);
      }
      if (!ip.empty() && port > 0 && port <= 65535 && epoch > best_epoch) {
        best_epoch = epoch;
        best = {ip, static_cast<std::uint16_t>(port)};
      }
      continue;
    }
    if (!tried.empty()) tried += "; ";
    if (v.is_error() && v.text.find("No such master") != std::string::npos) {
      any_answered = true;
      tried += where + ": unknown master";
    } else {
      if (!v.is_error() || !v.text.starts_with("IO")) any_answered = true;
      tried += where + ": " + (v.is_error() ? v.text : std::string("unexpected reply"));
    }
  }
  if (best_epoch >= 0) {
    master_ = best;
    target.host = master_.host;
    target.port = master_.port;
    target.unix_socket.clear();
    return true;
  }
  error = any_answered ? "no sentinel knows master '" + name + "' (" + tried + ")"
                       : "no sentinel reachable for master '" + name + "' (" + tried + ")";
  return false;
}

bool connection::connect_to(const endpoint& target, std::string& error) {
  const timeval connect_tv = to_timeval(opts_.connect_timeout);
  redisContext* c = target.unix_socket.empty()
                        ? redisConnectWithTimeout(target.host.c_str(), target.port, connect_tv)
                        : redisConnectUnixWithTimeout(target.unix_socket.c_str(), connect_tv);
  if (c == nullptr) {
    error = "cannot allocate a Redis context";
    return false;
  }
  if (c->err != 0) {
    error = "connect to " + server() + ": " + c->errstr;
    redisFree(c);
    return false;
  }
  redisSetTimeout(c, to_timeval(opts_.io_timeout));
  if (target.unix_socket.empty()) redisEnableKeepAlive(c);
  ctx_ = c;

  auto check = [&](const value& v, std::string_view what) {
    if (!v.is_error()) return true;
    error = std::string(what) + " on " + server() + ": " + v.text;
    disconnect();
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
  if (!opts_.client_name.empty())
    if (!check(command({"CLIENT", "SETNAME", opts_.client_name}), "CLIENT SETNAME")) return false;
  return true;
}

// A master demoted to replica answers writes with -READONLY and keeps the socket
// open: without this, a connection would stay on it for ever. Reconnecting finds the
// new master through the sentinels, or through a name that moved (a managed Redis's
// primary endpoint).
void connection::drop_if_demoted(const value& reply) noexcept {
  if (reply.is_error() && reply.text.starts_with("READONLY")) disconnect();
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
  drop_if_demoted(v);
  return v;
}

std::size_t connection::master_count() {
  if (!cluster_) return 1;
  std::string ignored;
  if (!cluster_->ensure_connected(ignored)) return 0;
  return cluster_->masters().size();
}

value connection::command_on_master(std::size_t index, std::span<const std::string_view> argv) {
  if (cluster_) return cluster_->command_on_master(index, argv);
  return command(argv);
}

value connection::command(std::span<const std::string_view> argv) {
  if (cluster_) return cluster_->command(argv);
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
  if (cluster_) return cluster_->pipeline(commands);
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
  if (cluster_) {
    // Bytes for several masters cannot be routed without reading them back: a caller
    // on a cluster builds each master's pipeline (cluster_connection::master_of and
    // pipeline_encoded_to), as the telemetry writer does.
    return std::vector<value>(
        count, value::make_error("ERR an encoded pipeline on a cluster goes to one master: "
                                 "use cluster_connection::pipeline_encoded_to"));
  }
  std::string error;
  if (!send_encoded(commands, error)) return std::vector<value>(count, value::make_error(error));
  return read_replies(count);
}

bool connection::send_encoded(std::string_view commands, std::string& error) {
  if (cluster_) {
    error = "ERR an encoded pipeline on a cluster goes to one master";
    return false;
  }
  if (!ensure_connected(error)) {
    error = "IO " + error;
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
  // After every reply is read: dropping the context earlier would lose the rest.
  for (const value& v : replies) drop_if_demoted(v);
  return replies;
}

}  // namespace tgw::infra::redis
