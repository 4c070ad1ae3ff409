#pragma once

// The API's store without Redis, for the tests of request handling and the fuzzer: a
// few known devices, commands kept in a map, and a `down` switch that makes every call
// fail as an unreachable Redis would. Its rules are the Redis store's where a test
// looks: an unknown device without queue_if_offline publishes nothing, and a repeated
// idempotency key returns the first command (or a conflict for another request).
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "infra/api/api_store.hpp"

namespace tgw::test {

struct fake_api_state {
  std::mutex mutex;
  bool down = false;
  std::map<std::string, infra::telemetry::listed_device> devices;
  std::map<std::string, infra::api::command_view> commands;
  /// Idempotency key -> (fingerprint, command id).
  std::map<std::string, std::pair<std::string, std::string>> keys;
  std::size_t published = 0;
};

class fake_api_store final : public infra::api::api_store {
 public:
  explicit fake_api_store(std::shared_ptr<fake_api_state> s) : s_(std::move(s)) {}

  std::optional<infra::api::device_page> devices(const infra::api::device_query& q,
                                                 std::string& error) override {
    const std::lock_guard lock(s_->mutex);
    if (failing(error)) return std::nullopt;
    infra::api::device_page page;
    page.at_ms = 1'700'000'000'000;
    for (auto it = s_->devices.upper_bound(q.after); it != s_->devices.end(); ++it) {
      if (page.devices.size() == q.limit) {
        page.next_cursor = page.devices.back().imei;
        break;
      }
      page.devices.push_back(it->second);
    }
    return page;
  }

  std::optional<std::optional<infra::api::device_detail>> device(const std::string& imei,
                                                                 std::string& error) override {
    const std::lock_guard lock(s_->mutex);
    if (failing(error)) return std::nullopt;
    const auto it = s_->devices.find(imei);
    if (it == s_->devices.end()) return std::optional<infra::api::device_detail>{};
    return std::optional<infra::api::device_detail>{
        infra::api::device_detail{it->second, {}, 1'700'000'000'000}};
  }

  std::optional<infra::api::record_page> records(const infra::api::record_query&,
                                                 std::string& error) override {
    const std::lock_guard lock(s_->mutex);
    if (failing(error)) return std::nullopt;
    return infra::api::record_page{};
  }

  std::optional<infra::api::command_submitted> submit(const infra::api::command_submission& c,
                                                      std::string& error) override {
    const std::lock_guard lock(s_->mutex);
    if (failing(error)) return std::nullopt;
    if (!c.queue_if_offline && !s_->devices.contains(c.imei))
      return infra::api::command_submitted{c.command_id, "unknown_device", false, false, {}};
    if (!c.idempotency_key.empty()) {
      const auto it = s_->keys.find(c.publisher + '\n' + c.imei + '\n' + c.idempotency_key);
      if (it != s_->keys.end())
        return infra::api::command_submitted{it->second.second,
                                             "sent",
                                             it->second.first == c.fingerprint,
                                             it->second.first != c.fingerprint,
                                             {}};
      s_->keys[c.publisher + '\n' + c.imei + '\n' + c.idempotency_key] = {c.fingerprint,
                                                                          c.command_id};
    }
    ++s_->published;
    infra::commands::command_record r;
    r.command_id = c.command_id;
    r.payload = c.text;
    r.codec = std::to_string(c.codec);
    r.publisher = c.publisher;
    r.status = s_->devices.contains(c.imei) ? "sent" : "queued";
    s_->commands[c.command_id] = {c.imei, r};
    return infra::api::command_submitted{c.command_id, r.status, false, false, "gw-1"};
  }

  std::optional<std::optional<infra::api::command_view>> command(const std::string& id,
                                                                 std::string& error) override {
    const std::lock_guard lock(s_->mutex);
    if (failing(error)) return std::nullopt;
    const auto it = s_->commands.find(id);
    if (it == s_->commands.end()) return std::optional<infra::api::command_view>{};
    return std::optional<infra::api::command_view>{it->second};
  }

  std::optional<std::vector<infra::commands::command_record>> history(const std::string& imei,
                                                                      std::int64_t,
                                                                      std::string& error) override {
    const std::lock_guard lock(s_->mutex);
    if (failing(error)) return std::nullopt;
    std::vector<infra::commands::command_record> out;
    for (const auto& [id, c] : s_->commands)
      if (c.imei == imei) out.push_back(c.record);
    return out;
  }

  bool reachable(std::string& error) override {
    const std::lock_guard lock(s_->mutex);
    return !failing(error);
  }

 private:
  bool failing(std::string& error) const {
    if (s_->down) error = "IO: connection refused (the fake store is down)";
    return s_->down;
  }
  std::shared_ptr<fake_api_state> s_;
};

/// A device as the store lists it: online, held by gw-1, at a known position.
inline infra::telemetry::listed_device known_device(const std::string& imei) {
  infra::telemetry::listed_device d;
  d.imei = imei;
  d.owner = "gw-1";
  d.owner_alive = true;
  d.has_projection = true;
  d.projection.online = "1";
  d.projection.last_seen_ms = "1700000000000";
  d.projection.connected_ms = "1699999000000";
  d.projection.last_ts = "1699999999000";
  d.projection.lat = "546992512";
  d.projection.lon = "252616688";
  d.projection.speed = "41";
  d.projection.satellites = "12";
  d.projection.records_total = 10;
  return d;
}

}  // namespace tgw::test
