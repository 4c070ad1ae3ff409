#pragma once

#include <string>

#include "infra/api/api_server.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// The API's flags that are durations, as given, until apply_api_flags reads them.
struct api_flag_values {
  std::string seen_within = "168h";
  std::string max_wait = "60s";
  std::string idempotency_ttl = "24h";
};

/// Adds the API's flags to `cmd`, read into `settings` (whose values are the defaults)
/// and `flags`: for `tgw api` (`in_serve` false) --listen, --tokens, --no-auth,
/// --tls-cert, --tls-key, --workers, ...; for `tgw serve` the same behind `--api-`
/// (--api-addr for the address, off when empty). Each reads <env_prefix>_<NAME> too.
void add_api_options(CLI::App* cmd, api::api_server_settings& settings, api_flag_values& flags,
                     const std::string& env_prefix, bool in_serve);

/// Reads the duration flags into `settings`; false with `error` naming the flag.
bool apply_api_flags(const api_flag_values& flags, api::api_server_settings& settings,
                     std::string& error);

}  // namespace tgw::infra
