#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"
#include "infra/redis/redis_url.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// Which Redis a client subcommand (command, registry, projections) talks to: --redis
/// when given; otherwise the private Redis of a `tgw serve` started with its defaults
/// in --data-dir (default tgw-data, relative to the working directory, as for serve);
/// otherwise a redis-server on 127.0.0.1:6379, if one answers.
struct redis_choice {
  std::string url;  ///< Empty: look for one.
  std::string data_dir = "tgw-data";
  redis::tls_options tls;  ///< --redis-tls-*, for a rediss URL.
};

/// Adds --redis (TGW_REDIS), --data-dir (TGW_DATA_DIR) and the --redis-tls-* options to
/// `cmd`.
void add_redis_options(CLI::App* cmd, redis_choice& choice);

/// Where to connect. nullopt with `error` set: `usage` true for a URL that does not
/// parse or a set-up the server refuses (a certificate, a password, a database: exit
/// 2), false when nothing was found or the server does not answer (exit 1; the error
/// names where it looked, the cause and the fix).
std::optional<redis::endpoint> resolve_redis(const redis_choice& choice, std::string& error,
                                             bool& usage);

/// Connects to `where` once: false with `error` (the cause and its fix, one line) when
/// it cannot be reached, refuses the log-in, or is not what the URL's scheme says (a
/// cluster node or a sentinel named by redis://). `usage` tells a set-up error (exit 2)
/// from an unreachable server (exit 1).
bool probe_redis(const redis::endpoint& where, std::string& error, bool& usage);

/// A reading client subcommand's connection, and the key shards the gateways agreed
/// on. `shards` is empty on a cluster no gateway has written to yet: nothing to read.
struct redis_reader {
  std::unique_ptr<redis::connection> conn;
  std::optional<redis::key_shards> shards;
};

/// Connects `tgw WHO` to the Redis `choice` names. nullopt after printing one line
/// ("tgw WHO: why") to stderr, with `exit_code` 2 for a bad URL and 1 otherwise.
std::optional<redis_reader> open_redis_reader(const redis_choice& choice, std::string_view who,
                                              int& exit_code);

}  // namespace tgw::infra
