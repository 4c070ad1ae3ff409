#pragma once

#include <string>

#include "infra/redis/redis_url.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds --redis-tls-ca, --redis-tls-cert, --redis-tls-key, --redis-tls-server-name and
/// --redis-tls-insecure (TGW_REDIS_TLS_*) to `cmd`: how a rediss:// URL's TLS is
/// verified, for every subcommand that talks to Redis.
void add_redis_tls_options(CLI::App* cmd, redis::tls_options& flags);

/// Puts the flags into `where`, whose scheme said whether it speaks TLS. False with
/// `error` (one line naming the fix) when TLS flags come with a plain URL, where they
/// would be ignored, or a certificate without its key. --redis-tls-insecure is logged at
/// warn: nothing then checks who answers.
bool apply_redis_tls(const redis::tls_options& flags, redis::endpoint& where, std::string& error);

}  // namespace tgw::infra
