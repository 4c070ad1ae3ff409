#pragma once

#include <optional>
#include <string>
#include <unordered_set>

#include "actors/ports/store_failure.hpp"

namespace tgw::ports {

/// Where an instance's allowlist comes from: read at start, again on SIGHUP and, for a
/// source that is polled, every --allowlist-refresh-s. The adapters: a file
/// (infra/net/allowlist_file.hpp) and a set in the gateway's store
/// (infra/registry/allowlist_set.hpp). Loading blocks (file or store I/O): call it from
/// the main thread or a thread of its own, never an io or actor thread.
class allowlist_source {
 public:
  virtual ~allowlist_source() = default;
  /// The whole list, or nullopt with `failure` set. A list that names no IMEI is a
  /// failure: it would let every device in, which no operator means by it.
  virtual std::optional<std::unordered_set<std::string>> load(store_failure& failure) = 0;
  /// Where the list is read, as an operator names it ("file /etc/tgw/allowed.txt").
  [[nodiscard]] virtual std::string describe() const = 0;
  /// Whether the list may change without a signal, so it is re-read periodically.
  [[nodiscard]] virtual bool polled() const { return false; }
};

}  // namespace tgw::ports
