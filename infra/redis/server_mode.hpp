#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "infra/redis/connection.hpp"

namespace tgw::infra::redis {

/// The server's mode in its own words: "standalone", "cluster" or "sentinel"; empty
/// when it does not say (unreachable, or it refused both HELLO and INFO to this user).
[[nodiscard]] std::string server_mode(connection& conn);

/// For a redis:// or unix:// endpoint: why the server at the other end cannot be used
/// that way (a Redis Cluster node, or a Sentinel), naming the URL to use instead; empty
/// when it can, or when its mode cannot be told. Sentinel and cluster URLs find their
/// servers by mode already and are not checked.
[[nodiscard]] std::string wrong_url_scheme(connection& conn);

/// The server's clock (TIME), ms since the epoch: "now" for the age of a time Redis
/// wrote, whatever the client's clock says. nullopt with `error` on a failure.
[[nodiscard]] std::optional<std::int64_t> server_time_ms(connection& conn, std::string& error);

}  // namespace tgw::infra::redis
