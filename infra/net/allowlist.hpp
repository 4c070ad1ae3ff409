#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace tgw::infra::net {

/// The IMEIs of an allowlist file: one per line, `#` starts a comment line, blank
/// lines are skipped. Returns nullopt with `error` set when the file cannot be read,
/// a line is not an IMEI (15 or 16 digits), or the file lists no IMEI at all: an
/// empty list would silently let every device in, which is never what a file meant.
std::optional<std::unordered_set<std::string>> load_allowlist(const std::string& path,
                                                              std::string& error);

/// Which devices may connect, shared by every session of an instance and replaced
/// whole on SIGHUP. No list (the default) admits every well-formed IMEI. Read once per
/// handshake, so a mutex around the pointer copy costs nothing measurable.
class allowlist {
 public:
  allowlist() = default;
  explicit allowlist(std::unordered_set<std::string> imeis);

  /// True if `imei` may connect.
  [[nodiscard]] bool admits(std::string_view imei) const;

  /// Replaces the list; sessions that already passed their handshake are not affected.
  void replace(std::unordered_set<std::string> imeis);

  /// IMEIs in the list; 0 when every device is admitted.
  [[nodiscard]] std::size_t size() const;

  /// The list in force; null when every device is admitted.
  [[nodiscard]] std::shared_ptr<const std::unordered_set<std::string>> current() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::unordered_set<std::string>> imeis_;  ///< Null: admit all.
};

}  // namespace tgw::infra::net
