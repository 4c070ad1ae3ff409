#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace tgw::domain {

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

}  // namespace tgw::domain
