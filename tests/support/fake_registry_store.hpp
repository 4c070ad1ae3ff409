#pragma once

// An in-memory registry for tests of the registry and janitor actors' logic: the same
// owner checks as the `tgw_registry` Functions, over plain maps, with a switch that
// makes every call fail as an unreachable server does. Several stores (instances)
// share one fake_registry, as instances share one Redis. The real store's own tests
// (tests/infra/registry) keep running against a redis-server.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "actors/ports/registry_store.hpp"
#include "tests/support/fake_store_failures.hpp"

namespace tgw::test {

/// What Redis would hold: the registry hash, each instance's reverse index, the live
/// heartbeats and the known instances.
struct fake_registry {
  std::map<std::string, std::string> owner;  ///< connections:registry
  std::map<std::string, std::set<std::string>> devices;
  std::set<std::string> heartbeats;
  /// Who wrote each live heartbeat (the store's holder value).
  std::map<std::string, std::string> heartbeat_holders;
  std::set<std::string> known;
  bool down = false;  ///< every call fails with an IO error, nothing changes

  [[nodiscard]] std::string owner_of(const std::string& imei) const {
    const auto it = owner.find(imei);
    return it == owner.end() ? "(nil)" : it->second;
  }
};

class fake_registry_store final : public ports::registry_store {
 public:
  fake_registry_store(std::shared_ptr<fake_registry> world, std::string instance,
                      std::string holder = "")
      : world_(std::move(world)),
        instance_(std::move(instance)),
        holder_(holder.empty() ? instance_ + "@fake" : std::move(holder)) {}

  bool register_device(const std::string& imei, ports::store_failure& error) override {
    if (refused(error)) return false;
    claim(imei);
    return true;
  }
  bool unregister_device(const std::string& imei, ports::store_failure& error) override {
    if (refused(error)) return false;
    release(imei);
    return true;
  }
  std::optional<std::size_t> unregister_all(const std::vector<std::string>& imeis,
                                            ports::store_failure& error) override {
    if (refused(error)) return std::nullopt;
    return static_cast<std::size_t>(std::count_if(
        imeis.begin(), imeis.end(), [this](const std::string& imei) { return release(imei); }));
  }
  std::optional<std::size_t> reassert(const std::vector<std::string>& imeis,
                                      ports::store_failure& error) override {
    if (refused(error)) return std::nullopt;
    std::size_t left = 0;
    for (const std::string& imei : imeis) {
      const std::string holder = world_->owner_of(imei);
      if (holder != instance_ && world_->heartbeats.contains(holder))
        ++left;  // a live instance holds it: the device reconnected there
      else
        claim(imei);
    }
    return left;
  }
  std::optional<std::vector<std::string>> missing_from_index(const std::vector<std::string>& imeis,
                                                             ports::store_failure& error) override {
    if (refused(error)) return std::nullopt;
    std::vector<std::string> missing;
    for (const std::string& imei : imeis)
      if (!world_->devices[instance_].contains(imei)) missing.push_back(imei);
    return missing;
  }
  std::optional<ports::heartbeat_outcome> heartbeat(std::chrono::seconds /*ttl*/,
                                                    ports::store_failure& error) override {
    if (refused(error)) return std::nullopt;
    ports::heartbeat_outcome out;
    const auto holder = world_->heartbeat_holders.find(instance_);
    if (world_->heartbeats.contains(instance_) && holder != world_->heartbeat_holders.end() &&
        holder->second != holder_) {
      out.taken_by = holder->second;
      out.taken_by_described = "a process that wrote '" + holder->second + "'";
      return out;
    }
    world_->known.insert(instance_);
    world_->heartbeat_holders[instance_] = holder_;
    out.was_missing = world_->heartbeats.insert(instance_).second;
    return out;
  }
  std::optional<bool> release_heartbeat(ports::store_failure& error) override {
    if (refused(error)) return std::nullopt;
    const auto holder = world_->heartbeat_holders.find(instance_);
    if (holder != world_->heartbeat_holders.end() && holder->second != holder_) return false;
    world_->heartbeats.erase(instance_);
    world_->heartbeat_holders.erase(instance_);
    return true;
  }
  std::optional<ports::janitor_report> janitor_pass(ports::janitor_mode, std::size_t,
                                                    ports::store_failure& error) override {
    if (refused(error)) return std::nullopt;
    ports::janitor_report report;
    report.instances_checked = world_->known.size();
    for (auto it = world_->known.begin(); it != world_->known.end();) {
      if (world_->heartbeats.contains(*it)) {
        ++it;
        continue;
      }
      report.dead.push_back(*it);
      // Only entries that still name the dead instance: a device that registered
      // elsewhere since keeps its entry.
      for (const std::string& imei : world_->devices[*it])
        if (world_->owner_of(imei) == *it) {
          world_->owner.erase(imei);
          ++report.evicted;
        }
      world_->devices.erase(*it);
      it = world_->known.erase(it);
    }
    return report;
  }
  [[nodiscard]] const std::string& instance_id() const override { return instance_; }

 private:
  bool refused(ports::store_failure& error) const {
    if (!world_->down) return false;
    error = unreachable_store();
    return true;
  }
  void claim(const std::string& imei) {
    const std::string previous = world_->owner_of(imei);
    if (previous != instance_) world_->devices[previous].erase(imei);
    world_->owner[imei] = instance_;
    world_->devices[instance_].insert(imei);
    world_->known.insert(instance_);
  }
  bool release(const std::string& imei) {
    world_->devices[instance_].erase(imei);
    if (world_->owner_of(imei) != instance_) return false;
    world_->owner.erase(imei);
    return true;
  }

  std::shared_ptr<fake_registry> world_;
  std::string instance_;
  std::string holder_;
};

}  // namespace tgw::test
