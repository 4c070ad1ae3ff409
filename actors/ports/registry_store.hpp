#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/ports/store_failure.hpp"

namespace tgw::ports {

/// How the janitor finds a dead instance's entries.
enum class janitor_mode : std::uint8_t {
  reverse_index,  ///< Read the dead instance's own index: cost follows its size.
  scan,           ///< Read the whole registry and check each owner's heartbeat.
};

/// What one janitor pass did.
struct janitor_report {
  std::size_t instances_checked = 0;
  std::vector<std::string> dead;
  std::uint64_t evicted = 0;  ///< Entries this pass actually deleted.
};

/// What one heartbeat write found.
struct heartbeat_outcome {
  /// The key had expired (or never existed): this instance was presumed dead and must
  /// re-assert its devices.
  bool was_missing = false;
  /// Not empty: another process holds the key (its value, a heartbeat_holder's), one
  /// started with the same instance id; nothing was written.
  std::string taken_by;
  /// That process as an operator finds it ("pid 4242 on host web-1"), for the log.
  std::string taken_by_described;
};

/// The registry as the registry and janitor actors see it: owner-checked steps over
/// the registry of connected devices, the reverse indexes and the heartbeats.
/// Implemented by the registry adapter (infra/registry); tests of the actors' logic
/// stand in an in-memory one (tests/support/fake_registry_store.hpp). Every call blocks, so it
/// belongs to one thread (a detached actor's).
class registry_store {
 public:
  virtual ~registry_store() = default;

  /// Registers `imei` to this instance; the previous owner's reverse index loses it in
  /// the same step. False with `failure` set when the store fails.
  virtual bool register_device(const std::string& imei, store_failure& failure) = 0;
  /// Deletes the entry only if it still names this instance.
  virtual bool unregister_device(const std::string& imei, store_failure& failure) = 0;
  /// The same for many devices. Returns how many entries were deleted.
  virtual std::optional<std::size_t> unregister_all(const std::vector<std::string>& imeis,
                                                    store_failure& failure) = 0;
  /// Puts back the entries of devices this instance holds, after an outage or after
  /// its heartbeat lapsed (the repair). Unlike register_device it never takes an
  /// entry from a live instance: the device reconnected there, and this instance's
  /// session of it is stale. Returns how many were left to live instances.
  virtual std::optional<std::size_t> reassert(const std::vector<std::string>& imeis,
                                              store_failure& failure) = 0;
  /// The devices of `imeis` that this instance's reverse index lacks. A device's entry
  /// leaves the index when another instance takes it; when that registration was stale
  /// (its session already closing there), its unregister then deletes the entry, and
  /// only this check finds the device that is still connected here.
  virtual std::optional<std::vector<std::string>> missing_from_index(
      const std::vector<std::string>& imeis, store_failure& failure) = 0;
  /// Renews this instance's heartbeat for `ttl`, unless another process holds it.
  /// nullopt on failure.
  virtual std::optional<heartbeat_outcome> heartbeat(std::chrono::seconds ttl,
                                                     store_failure& failure) = 0;
  /// Deletes this instance's heartbeat (shutdown) if this process still holds it.
  /// False, deleting nothing, when another process with the same instance id does;
  /// nullopt on failure.
  virtual std::optional<bool> release_heartbeat(store_failure& failure) = 0;
  /// One janitor pass over every known instance whose heartbeat is gone: their entries
  /// are deleted, unless a device registered elsewhere since.
  virtual std::optional<janitor_report> janitor_pass(janitor_mode mode, std::size_t batch,
                                                     store_failure& failure) = 0;

  [[nodiscard]] virtual const std::string& instance_id() const = 0;
};

}  // namespace tgw::ports
