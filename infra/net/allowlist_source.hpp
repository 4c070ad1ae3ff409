#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "infra/redis/connection.hpp"

namespace tgw::infra::net {

/// The Redis SET that holds the allowed IMEIs when `tgw serve --allowlist-redis`; one
/// set shared by every instance on the same Redis.
inline constexpr const char* allowed_devices_key = "devices:allowed";

/// Where an instance's allowlist comes from: read at start, again on SIGHUP and, for
/// Redis, every --allowlist-refresh-s. Loading blocks (file or Redis I/O): call it
/// from the main thread or a thread of its own, never an io or actor thread.
class allowlist_source {
 public:
  virtual ~allowlist_source() = default;
  /// The whole list, or nullopt with `error` set. A list that names no IMEI is an
  /// error: it would let every device in, which no operator means by it.
  virtual std::optional<std::unordered_set<std::string>> load(std::string& error) = 0;
  /// "file /etc/tgw/allowed.txt" or "Redis SET devices:allowed".
  [[nodiscard]] virtual std::string describe() const = 0;
  /// Whether the list may change without a signal, so it is re-read periodically.
  [[nodiscard]] virtual bool polled() const { return false; }
};

std::unique_ptr<allowlist_source> file_allowlist(std::string path);
std::unique_ptr<allowlist_source> redis_allowlist(redis::connection::options where);

}  // namespace tgw::infra::net
