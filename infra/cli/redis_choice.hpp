#pragma once

#include <optional>
#include <string>

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
};

/// Adds --redis (TGW_REDIS) and --data-dir (TGW_DATA_DIR) to `cmd`.
void add_redis_options(CLI::App* cmd, redis_choice& choice);

/// Where to connect. nullopt with `error` set: `usage` true for a URL that does not
/// parse (exit 2), false when nothing was found (exit 1; the error names where it
/// looked and the exact --redis URL to pass).
std::optional<redis::endpoint> resolve_redis(const redis_choice& choice, std::string& error,
                                             bool& usage);

}  // namespace tgw::infra
