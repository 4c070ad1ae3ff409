#pragma once

#include <memory>

#include "actors/ports/allowlist_source.hpp"
#include "infra/redis/connection.hpp"

namespace tgw::infra::registry {

/// The allowlist source of `tgw serve --allowlist-redis`: the IMEIs of the Redis SET
/// devices:allowed (keys::allowed_devices), one set shared by every instance on the
/// same Redis, read in pages and re-read periodically.
std::unique_ptr<ports::allowlist_source> redis_allowlist(redis::connection::options where);

}  // namespace tgw::infra::registry
