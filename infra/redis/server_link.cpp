#include "infra/redis/server_link.hpp"

#include <array>

#include "infra/redis/link_errors.hpp"
#include "infra/redis/tls_client_context.hpp"

namespace tgw::infra::redis {
namespace {

using std::chrono::milliseconds;

value not_connected() {
  return value::make_unreachable("not connected");
}

std::string ms_text(milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

// hiredis' reader names a bad type byte as "\x15" or "\x16": a TLS alert or handshake
// record where a RESP reply should be.
bool looks_like_tls(std::string_view parse_error) {
  return parse_error.find("\\x15") != std::string_view::npos ||
         parse_error.find("\\x16") != std::string_view::npos;
}

}  // namespace

void server_link::close() noexcept {
  stream_.close();
}

bool server_link::start(const endpoint& target, std::string_view label,
                        std::shared_ptr<const tls_client_context>& tls, std::string& error) {
  close();
  reader_.reset();
  label_ = label;
  answered_ = false;
  if (target.tls.enabled) tls = tls_client_context::of(target.tls, error);
  return !target.tls.enabled || tls != nullptr;
}

bool server_link::open(const endpoint& target, std::string_view label, std::string& error) {
  std::shared_ptr<const tls_client_context> tls;
  if (!start(target, label, tls, error) ||
      !stream_.connect(target, std::move(tls), label_, settings_.connect_timeout, error))
    return false;

  value reply;
  bool sent = false;
  if (!target.password.empty()) {
    sent = true;
    const bool as_user = !target.user.empty();
    if (!(as_user ? log_in_step({"AUTH", target.user, target.password}, "AUTH", reply, error)
                  : log_in_step({"AUTH", target.password}, "AUTH", reply, error)))
      return false;
    if (reply.is_error()) {
      error = std::string(link_errors::auth_refused) + " by " + label_ +
              (as_user ? " for user '" + target.user + "'" : std::string()) + ": " + reply.text;
      close();
      return false;
    }
  }
  if (target.db != 0) {
    sent = true;
    const std::string db = std::to_string(target.db);
    if (!log_in_step({"SELECT", db}, "SELECT", reply, error)) return false;
    if (reply.is_error()) {
      error = reply.text.find("cluster mode") != std::string::npos
                  ? label_ + " " + std::string(link_errors::select_on_cluster) + " (SELECT " + db +
                        ": " + reply.text + ")"
                  : std::string(link_errors::database_refused) + " by " + label_ + " (SELECT " +
                        db + "): " + reply.text;
      close();
      return false;
    }
  }
  // Without a command of its own to send, PING: the first reply is what proves the
  // server answers, and under TLS 1.3 a refused client certificate shows only then.
  const bool named = !settings_.client_name.empty();
  if (named || !sent) {
    const bool ok = named ? log_in_step({"CLIENT", "SETNAME", settings_.client_name},
                                        "CLIENT SETNAME", reply, error)
                          : log_in_step({"PING"}, "PING", reply, error);
    if (!ok) return false;
    if (reply.is_error()) {
      error = reply.text.starts_with("NOAUTH")
                  ? label_ + " " + std::string(link_errors::auth_missing) + ": " + reply.text
                  : std::string(named ? "CLIENT SETNAME" : "PING") + " on " + label_ + ": " +
                        reply.text;
      close();
      return false;
    }
  }
  return true;
}

bool server_link::adopt(int fd, const endpoint& target, std::string_view label,
                        std::string& error) {
  std::shared_ptr<const tls_client_context> tls;
  if (!start(target, label, tls, error)) return false;
  const std::string& name = target.tls.server_name.empty() ? target.host : target.tls.server_name;
  return stream_.adopt(fd, std::move(tls), name, label_, settings_.connect_timeout, error);
}

bool server_link::log_in_step(std::initializer_list<std::string_view> argv, std::string_view what,
                              value& reply, std::string& error) {
  writer_.clear();
  writer_.begin(argv.size());
  for (const std::string_view a : argv) writer_.arg(a);
  value failed;
  if (!flush(writer_.bytes(), failed)) {
    error = transport_reason(failed.text);
    return false;
  }
  bool timed_out = false;
  std::optional<value> got = read_reply(settings_.connect_timeout, timed_out);
  if (got && !is_transport(got->failure)) {
    reply = std::move(*got);
    return true;
  }
  if (timed_out)
    error = label_ + " accepted the connection but " + std::string(link_errors::silent) + " " +
            ms_text(settings_.connect_timeout) + " (to " + std::string(what) + ")";
  else if (got)
    error = transport_reason(got->text);
  close();
  return false;
}

// A master demoted to replica answers writes with -READONLY and keeps the socket
// open: without this, a client would stay on it for ever. Reconnecting finds the new
// master through the sentinels, the slot map, or a name that moved (a managed Redis's
// primary endpoint).
void server_link::close_if_demoted(const value& reply) noexcept {
  if (reply.is_error() && reply.text.starts_with("READONLY")) close();
}

value server_link::io_failure(std::string_view why, failure_kind kind) {
  value v = value::make_transport_error(kind, why);
  close();
  return v;
}

bool server_link::flush(std::string_view bytes, value& failed) {
  std::string why;
  switch (stream_.write_all(bytes, settings_.io_timeout, why)) {
    case socket_stream::status::ok:
      return true;
    case socket_stream::status::timeout:
      failed = io_failure(label_ + " " + std::string(link_errors::no_bytes_taken) + " " +
                              ms_text(settings_.io_timeout),
                          failure_kind::timeout);
      return false;
    default:
      failed = io_failure(stream_.is_tls() ? why : label_ + ": " + why);
      return false;
  }
}

std::optional<value> server_link::read_reply(milliseconds wait, bool& timed_out) {
  timed_out = false;
  std::array<char, std::size_t{16} * 1024> buffer;
  while (true) {
    value v;
    std::string why;
    switch (reader_.next(v, why)) {
      case reply_reader::result::reply:
        answered_ = true;
        return v;
      case reply_reader::result::bad:
        return io_failure(!stream_.is_tls() && looks_like_tls(why)
                              ? label_ + " " + std::string(link_errors::tls_bytes) + " (" + why +
                                    ")"
                              : "protocol error from " + label_ + ": " + why);
      case reply_reader::result::need_more:
        break;
    }
    std::size_t got = 0;
    switch (stream_.read_some(buffer.data(), buffer.size(), got, wait, why)) {
      case socket_stream::status::ok:
        if (!reader_.feed(buffer.data(), got)) return io_failure("reply buffer full");
        break;
      case socket_stream::status::timeout:
        timed_out = true;
        return std::nullopt;
      case socket_stream::status::closed:
        if (stream_.is_tls()) return io_failure(why);
        return io_failure(answered_ ? label_ + ": " + why
                                    : label_ + " " + std::string(link_errors::closed_before_reply) +
                                          " (" + why + ")");
      case socket_stream::status::failed:
        return io_failure(stream_.is_tls() ? why : label_ + ": " + why);
    }
  }
}

value server_link::command(std::span<const std::string_view> argv) {
  if (!is_open()) return not_connected();
  writer_.clear();
  writer_.begin(argv.size());
  for (const std::string_view a : argv) writer_.arg(a);
  value failed;
  if (!flush(writer_.bytes(), failed)) return failed;
  std::vector<value> replies = receive_replies(1);
  return std::move(replies.front());
}

std::vector<value> server_link::pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (!is_open()) return std::vector<value>(commands.size(), not_connected());
  writer_.clear();
  for (const auto& argv : commands) {
    writer_.begin(argv.size());
    for (const std::string& a : argv) writer_.arg(a);
  }
  value failed;
  if (!flush(writer_.bytes(), failed)) return std::vector<value>(commands.size(), failed);
  return receive_replies(commands.size());
}

bool server_link::send_encoded(std::string_view commands, value& failed) {
  if (!is_open()) {
    failed = not_connected();
    return false;
  }
  return flush(commands, failed);
}

std::vector<value> server_link::receive_replies(std::size_t count) {
  std::vector<value> replies;
  if (!is_open()) return std::vector<value>(count, not_connected());
  replies.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    bool timed_out = false;
    std::optional<value> reply = read_reply(settings_.io_timeout, timed_out);
    if (!reply)
      // The reply may still come: the link cannot be trusted to pair the next one.
      reply = io_failure(
          label_ + " " + std::string(link_errors::silent) + " " + ms_text(settings_.io_timeout),
          failure_kind::timeout);
    if (is_transport(reply->failure) && !is_open()) {
      replies.resize(count, *reply);
      return replies;
    }
    replies.push_back(std::move(*reply));
  }
  // After every reply is read: closing the link earlier would lose the rest.
  for (const value& v : replies) close_if_demoted(v);
  return replies;
}

std::optional<value> server_link::next_message(milliseconds wait) {
  if (!is_open()) return not_connected();
  bool timed_out = false;
  return read_reply(wait, timed_out);
}

}  // namespace tgw::infra::redis
