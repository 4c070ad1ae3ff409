#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "actors/ports/retention_store.hpp"
#include "infra/redis/connection.hpp"

namespace tgw::infra::telemetry {

/// Reads the length and size of `stream` and its groups (XINFO GROUPS, XPENDING, and
/// XRANGE for the first entry a group has not been delivered; MEMORY USAGE, Redis'
/// sampled estimate). nullopt with `error` set when Redis refuses.
std::optional<ports::retention_view> read_retention(redis::connection& conn,
                                                    const std::string& stream, std::string& error);

/// Trims `stream` below what every group has acknowledged (XTRIM MINID, exact).
/// Returns the entries removed, or nullopt with `error` set.
std::optional<std::int64_t> trim_acknowledged(redis::connection& conn, const std::string& stream,
                                              const ports::retention_view& view,
                                              std::string& error);

/// INFO memory (used_memory, maxmemory); nullopt when Redis refuses it (an ACL without
/// +info).
std::optional<ports::memory_use> read_memory(redis::connection& conn);

/// Trims `stream` to its newest `keep` entries (XTRIM MAXLEN, exact). Returns the
/// entries removed, or nullopt with `error` set.
std::optional<std::int64_t> trim_to_length(redis::connection& conn, const std::string& stream,
                                           std::int64_t keep, std::string& error);

/// Smaller of two stream ids ("ms-seq").
[[nodiscard]] bool stream_id_less(const std::string& a, const std::string& b);

}  // namespace tgw::infra::telemetry
