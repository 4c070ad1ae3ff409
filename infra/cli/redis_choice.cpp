#include "infra/cli/redis_choice.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "infra/cli/redis_tls_flags.hpp"
#include "infra/cli/value_checks.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/failure_cause.hpp"
#include "infra/redis/server_mode.hpp"
#include "infra/redis/shard_agreement.hpp"

namespace tgw::infra {
namespace {

using std::chrono::milliseconds;

bool answers(const redis::endpoint& where) {
  redis::connection probe({where, milliseconds{500}, milliseconds{1000}, ""});
  const redis::value v = probe.command({"PING"});
  // A server that wants a password answers NOAUTH: it is there, and the real
  // connection will say what it needs.
  return v.text == "PONG" || v.text.starts_with("NOAUTH");
}

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

void add_redis_options(CLI::App* cmd, redis_choice& choice) {
  cmd->add_option("--redis", choice.url,
                  "redis://[user:password@]host:port/db, unix:///path?db=N, "
                  "redis+sentinel://host:port[,host:port...]/MASTER or "
                  "redis+cluster://host:port[,host:port...] (rediss... for TLS); default: the "
                  "private Redis of a tgw serve in --data-dir, else redis://127.0.0.1:6379/0")
      ->envname("TGW_REDIS")
      ->check(redis_url_check());
  cmd->add_option("--data-dir", choice.data_dir,
                  "Data directory of the tgw serve whose private Redis to use when --redis is "
                  "not given")
      ->envname("TGW_DATA_DIR")
      ->capture_default_str();
  add_redis_tls_options(cmd, choice.tls);
}

bool probe_redis(const redis::endpoint& where, std::string& error, bool& usage) {
  // A server that cannot be reached or refuses the log-in is said so at once, with the
  // fix, rather than after every command's own timeout.
  redis::connection probe({where, milliseconds{2000}, milliseconds{2000}, ""});
  if (std::string why; !probe.ensure_connected(why)) {
    const ports::failure_cause cause = redis::classify_connect_failure(why);
    error = ports::describe(cause);
    usage = redis::is_setup_failure(cause);
    return false;
  }
  // A cluster node or a sentinel named by redis:// would fail each command with a
  // puzzling error; say which URL to use instead.
  if (std::string wrong = redis::wrong_url_scheme(probe); !wrong.empty()) {
    error = "--redis: " + wrong;
    usage = true;
    return false;
  }
  return true;
}

std::optional<redis::endpoint> resolve_redis(const redis_choice& choice, std::string& error,
                                             bool& usage) {
  usage = false;
  if (!choice.url.empty()) {
    auto where = redis::parse_redis_url(choice.url, error);
    if (where && !apply_redis_tls(choice.tls, *where, error)) where.reset();
    usage = !where;
    if (where && !probe_redis(*where, error, usage)) return std::nullopt;
    return where;
  }
  std::error_code ec;
  const std::string socket =
      std::filesystem::absolute(std::filesystem::path(choice.data_dir) / "redis.sock", ec)
          .lexically_normal()
          .string();
  redis::endpoint private_redis;
  private_redis.unix_socket = socket;
  if (is_socket(socket) && answers(private_redis)) return private_redis;
  redis::endpoint local;  // 127.0.0.1:6379
  if (answers(local)) return local;
  error = "no Redis found: " +
          (is_socket(socket) ? socket + " does not answer (is its tgw serve stopped?)"
                             : "no tgw serve's private Redis in " + choice.data_dir + " (" +
                                   socket + " is absent)") +
          ", and nothing answers on 127.0.0.1:6379; pass --redis unix://" + socket +
          " (the private Redis of a tgw serve run with --data-dir " + choice.data_dir +
          ") or --redis redis://HOST:PORT/DB";
  return std::nullopt;
}

std::optional<redis_reader> open_redis_reader(const redis_choice& choice, std::string_view who,
                                              int& exit_code) {
  std::string error;
  bool usage = false;
  const auto where = resolve_redis(choice, error, usage);
  if (!where) {
    std::cerr << "tgw " << who << ": " << error << '\n';
    exit_code = usage ? 2 : 1;
    return std::nullopt;
  }
  // A client name holds no spaces: "tgw-command-history".
  std::string name = "tgw-" + std::string(who);
  std::replace(name.begin(), name.end(), ' ', '-');
  redis_reader reader;
  reader.conn = std::make_unique<redis::connection>(
      redis::connection::options{*where, milliseconds{2000}, milliseconds{30000}, name});
  bool none_stored = false;
  if (reader.conn->ensure_connected(error))
    reader.shards = redis::read_key_shards(*reader.conn, error, &none_stored);
  if (!reader.shards && !none_stored) {
    std::cerr << "tgw " << who << ": " << error << '\n';
    exit_code = 1;
    return std::nullopt;
  }
  return reader;
}

}  // namespace tgw::infra
