#include "infra/cli/redis_tls_flags.hpp"

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

namespace tgw::infra {

void add_redis_tls_options(CLI::App* cmd, redis::tls_options& flags) {
  cmd->add_option("--redis-tls-ca", flags.ca_file,
                  "rediss: PEM file of the CA(s) that sign the Redis servers' certificates; "
                  "default: the system's trust store")
      ->envname("TGW_REDIS_TLS_CA");
  cmd->add_option("--redis-tls-cert", flags.cert_file,
                  "rediss: client certificate (PEM), for servers with tls-auth-clients yes")
      ->envname("TGW_REDIS_TLS_CERT");
  cmd->add_option("--redis-tls-key", flags.key_file,
                  "rediss: the client certificate's private key (PEM)")
      ->envname("TGW_REDIS_TLS_KEY");
  cmd->add_option("--redis-tls-server-name", flags.server_name,
                  "rediss: the name sent as SNI and looked for in the servers' certificates, "
                  "when connecting by address; default: the host connected to")
      ->envname("TGW_REDIS_TLS_SERVER_NAME");
  cmd->add_flag("--redis-tls-insecure", flags.insecure,
                "rediss: check neither certificate nor name (for tests only)")
      ->envname("TGW_REDIS_TLS_INSECURE");
}

bool apply_redis_tls(const redis::tls_options& flags, redis::endpoint& where, std::string& error) {
  const bool enabled = where.tls.enabled;
  const bool any = !flags.ca_file.empty() || !flags.cert_file.empty() || !flags.key_file.empty() ||
                   !flags.server_name.empty() || flags.insecure;
  if (any && !enabled) {
    error = "--redis-tls-* options are for TLS, but the Redis URL " + where.describe() +
            " is plain: use rediss://, rediss+sentinel:// or rediss+cluster://";
    return false;
  }
  if (flags.cert_file.empty() != flags.key_file.empty()) {
    error = "--redis-tls-cert and --redis-tls-key go together: give both or neither";
    return false;
  }
  where.tls = flags;
  where.tls.enabled = enabled;
  if (enabled && flags.insecure)
    spdlog::warn(
        "--redis-tls-insecure: the Redis servers' certificates and names are not checked; "
        "anyone on the path can read and change what goes to Redis (for tests only)");
  return true;
}

}  // namespace tgw::infra
