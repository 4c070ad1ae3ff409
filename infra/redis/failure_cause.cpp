#include "infra/redis/failure_cause.hpp"

#include <algorithm>

#include "infra/redis/link_errors.hpp"

namespace tgw::infra::redis {
namespace {

using ports::failure_cause;

constexpr std::size_t max_detail = 200;

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(std::min(text.size(), max_detail + 3));
  for (const char c : text) {
    if (out.size() >= max_detail) {
      out += "...";
      break;
    }
    out += (c == '\r' || c == '\n') ? ' ' : c;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '.')) out.pop_back();
  return out;
}

// Inside a Function, Redis names neither the command nor the key an ACL refused:
// "ERR The user executing the script can't run this command or subcommand script: f,
// on @user_function:12." The line number points into the library's source, and that
// line's redis.call names the command.
std::string command_at_line(std::string_view error, std::string_view library) {
  constexpr std::string_view marker = "@user_function:";
  const auto at = error.rfind(marker);
  if (at == std::string_view::npos || library.empty()) return {};
  std::size_t line = 0;
  for (std::size_t i = at + marker.size(); i < error.size() && error[i] >= '0' && error[i] <= '9';
       ++i)
    line = line * 10 + static_cast<std::size_t>(error[i] - '0');
  if (line == 0) return {};
  std::size_t begin = 0;
  for (std::size_t n = 1; n < line; ++n) {
    begin = library.find('\n', begin);
    if (begin == std::string_view::npos) return {};
    ++begin;
  }
  const std::string_view text = library.substr(begin, library.find('\n', begin) - begin);
  constexpr std::string_view call = "redis.call('";
  const auto c = text.find(call);
  if (c == std::string_view::npos) return {};
  const auto name_begin = c + call.size();
  const auto name_end = text.find('\'', name_begin);
  if (name_end == std::string_view::npos) return {};
  std::string name(text.substr(name_begin, name_end - name_begin));
  for (char& ch : name) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  return name;
}

// The 'x' in "... to run the 'x' command".
std::string quoted_command(std::string_view error) {
  const auto run = error.find("run the '");
  if (run == std::string_view::npos) return {};
  const auto begin = run + 9;
  const auto end = error.find('\'', begin);
  return end == std::string_view::npos ? std::string()
                                       : std::string(error.substr(begin, end - begin));
}

constexpr std::string_view acl_docs = " (docs/OPERATIONS.md, \"Redis ACLs\")";

failure_cause noperm(std::string_view error, std::string_view library) {
  failure_cause c{"noperm", one_line(error), {}};
  std::string command = quoted_command(error);
  if (command.empty()) command = command_at_line(error, library);
  const bool key = error.find("key") != std::string_view::npos;
  if (!command.empty())
    c.fix = "the Redis ACL user needs +" + command + std::string(acl_docs);
  else if (key)
    c.fix =
        "the Redis ACL user needs access to the gateway's keys (~telemetry:* ~journal:* "
        "~device:* ~connections:registry ~instance:* ~instances:known ~commands:*)" +
        std::string(acl_docs);
  else
    c.fix = "the Redis ACL user lacks a permission the gateway needs" + std::string(acl_docs);
  return c;
}

// A connection that could not be made or broke, in the client's words: the server
// link names the cause with link_errors' phrases, and each has its fix.
failure_cause link_failure(std::string_view text) {
  namespace e = link_errors;
  struct known {
    std::string_view phrase;
    std::string_view label;
    std::string_view fix;
  };
  static constexpr known causes[] = {
      {e::tls_local_files, "tls",
       "fix the file or the option named (--redis-tls-ca, --redis-tls-cert, --redis-tls-key)"},
      {e::tls_untrusted, "tls",
       "pass --redis-tls-ca with the CA that signed the server's certificate (without it, "
       "the system's trust store is used)"},
      {e::tls_expired, "tls",
       "renew the Redis server's certificate (its tls-cert-file), or check this host's clock"},
      {e::tls_not_yet_valid, "tls",
       "check this host's clock, or the Redis server's certificate dates"},
      {e::tls_name_mismatch, "tls",
       "connect by a name the certificate holds, or name one with --redis-tls-server-name"},
      {e::tls_refused_certificate, "tls",
       "check the Redis server's certificate against --redis-tls-ca"},
      {e::tls_not_tls, "tls",
       "this port speaks plain Redis: use redis:// for it, or rediss:// with the server's "
       "tls-port"},
      {e::tls_bytes, "tls", "this port speaks TLS (tls-port): use rediss://"},
      {e::closed_before_reply, "tls",
       "if this port speaks TLS only (tls-port), use rediss://; else see the server's log"},
      {e::tls_client_certificate_required, "tls",
       "the server has tls-auth-clients yes: pass --redis-tls-cert and --redis-tls-key"},
      {e::tls_client_certificate_refused, "tls",
       "the server's tls-ca-cert-file must hold the CA that signed --redis-tls-cert"},
      {e::tls_handshake_silent, "tls",
       "a plain Redis port waits in silence for a TLS client: use redis:// for it (else the "
       "server is paused or overloaded)"},
      {e::auth_refused, "auth",
       "check the user and password in the Redis URL (redis://user:password@host:port)"},
      {e::auth_missing, "auth",
       "put the user and password in the Redis URL (redis://user:password@host:port)"},
      {e::database_refused, "database",
       "name a database below the server's `databases` setting (16 by default) after the "
       "URL's last /"},
      {e::select_on_cluster, "cluster_mode",
       "a cluster has database 0 only: name it with redis+cluster://host:port"},
      {e::not_a_sentinel, "sentinel",
       "redis+sentinel:// names the sentinels (port 26379 by default); a single server is "
       "redis://host:port"},
      {e::unknown_master, "sentinel", "put a master name they watch after the URL's last /"},
      {e::silent, "timeout",
       "the server took the connection but does not answer: is it paused (SIGSTOP), "
       "overloaded, or not Redis? (redis-cli -h HOST -p PORT PING)"},
  };
  for (const known& k : causes)
    if (text.find(k.phrase) != std::string_view::npos)
      return {std::string(k.label), one_line(text), std::string(k.fix)};
  return {"connection", one_line(text),
          "Redis is unreachable: check that it runs and that this host can reach it"};
}

}  // namespace

failure_cause classify_redis_failure(failure_kind kind, std::string_view error,
                                     bool under_replicated, std::string_view library_source,
                                     bool on_cluster) {
  if (under_replicated)
    return {"replicas", one_line(error),
            "ACKs wait until as many replicas as --ack-replicas asks confirm each write: "
            "bring a replica back (or lower --ack-replicas)"};
  switch (kind) {
    case failure_kind::unreachable:
    case failure_kind::timeout:
      return link_failure(transport_reason(error));
    case failure_kind::no_permission:
      return noperm(error, library_source);
    case failure_kind::moved:
      if (on_cluster)
        return {"slot_moved", one_line(error),
                "the slot moved to another master (a failover or a reshard): the writes are "
                "sent again to it, within --persist-retry-ms"};
      [[fallthrough]];
    case failure_kind::cross_slot:
      return {"cluster_mode", one_line(error),
              "this is a Redis Cluster node: name the cluster with redis+cluster://host:port"};
    case failure_kind::cluster_down:
      return {"cluster_down", one_line(error),
              "the cluster has a slot without a master: writes resume once it is covered again"};
    case failure_kind::out_of_memory:
      return {"oom", one_line(error),
              "Redis reached its maxmemory: the telemetry stream is trimmed only below what "
              "every consumer group acknowledged, so start the consumers that lag (tgw sink "
              "postgres) or delete a group that is gone for good; or raise maxmemory "
              "(docs/TELEMETRY.md, \"How long entries stay\")"};
    case failure_kind::loading:
      return {"loading", one_line(error), "Redis is loading its data set; writes resume after"};
    case failure_kind::read_only:
      return {"readonly", one_line(error),
              "the server is a replica or lost its master (a failover in progress?); writes "
              "resume on the new master"};
    case failure_kind::no_replicas:
      return {"replicas", one_line(error),
              "the master refuses writes with fewer replicas than its min-replicas-to-write: "
              "bring a replica back"};
    case failure_kind::disk:
      return {"disk", one_line(error),
              "Redis cannot save to its disk and refuses writes: see its log"};
    case failure_kind::busy:
      return {"busy", one_line(error), "Redis is busy running a script"};
    case failure_kind::script:
      return {"function", one_line(error),
              "a tgw Redis Function failed: is the server Redis 7 or later, and the Function "
              "library loaded?"};
    case failure_kind::none:
    case failure_kind::try_again:
    case failure_kind::other:
      break;
  }
  return {"other", one_line(error), {}};
}

failure_cause classify_redis_failure(std::string_view error, bool under_replicated,
                                     std::string_view library_source, bool on_cluster) {
  return classify_redis_failure(failure_of_text(error), error, under_replicated, library_source,
                                on_cluster);
}

failure_cause classify_connect_failure(std::string_view why) {
  return link_failure(why);
}

bool is_setup_failure(const ports::failure_cause& cause) {
  return cause.label == "tls" || cause.label == "auth" || cause.label == "database" ||
         cause.label == "sentinel" || cause.label == "cluster_mode";
}

ports::failure_kind port_kind(failure_kind kind) noexcept {
  using port = ports::failure_kind;
  switch (kind) {
    case failure_kind::none:
      return port::none;
    case failure_kind::unreachable:
      return port::unreachable;
    case failure_kind::timeout:
      return port::timeout;
    case failure_kind::no_permission:
      return port::no_permission;
    case failure_kind::out_of_memory:
      return port::out_of_memory;
    case failure_kind::read_only:
      return port::read_only;
    case failure_kind::moved:
    case failure_kind::try_again:
      return port::moved;
    case failure_kind::cluster_down:
    case failure_kind::loading:
    case failure_kind::no_replicas:
    case failure_kind::disk:
    case failure_kind::busy:
      return port::unavailable;
    case failure_kind::cross_slot:
    case failure_kind::script:
    case failure_kind::other:
      break;
  }
  return port::other;
}

ports::store_failure store_failure_of(failure_kind kind, std::string_view error,
                                      std::string_view library_source, std::string_view what,
                                      bool under_replicated, bool on_cluster) {
  ports::store_failure f{port_kind(kind), classify_redis_failure(kind, error, under_replicated,
                                                                 library_source, on_cluster)};
  // A store that failed without a Redis failure (a reply of the wrong shape) is still a
  // failure.
  if (f.kind == ports::failure_kind::none) f.kind = ports::failure_kind::other;
  if (!what.empty()) f.cause.detail = std::string(what) + ": " + f.cause.detail;
  return f;
}

ports::store_failure store_failure_of_text(std::string_view error, std::string_view library_source,
                                           std::string_view what) {
  return store_failure_of(failure_of_text(error), error, library_source, what);
}

}  // namespace tgw::infra::redis
