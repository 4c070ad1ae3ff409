#pragma once

// An in-memory command store for tests of the command reader's, responder's and
// janitor's logic: the rules of the `tgw_commands` Functions (command_library.lua) over
// plain containers, with a switch that makes every call fail as an unreachable server
// does. Several stores (instances) share one fake_commands, as instances share one
// Redis; its registry and heartbeats are a fake_registry, which registry stores may
// share. The real store's own tests (tests/infra/commands) keep running against a
// redis-server.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "actors/ports/command_store.hpp"
#include "codecs/imei.hpp"
#include "tests/support/fake_registry_store.hpp"
#include "tests/support/fake_store_failures.hpp"

namespace tgw::test {

/// What Redis would hold for commands: the outbound streams with their consumer
/// groups, the offline queues, the command markers, the responses and the journals.
struct fake_commands {
  /// commands:outbound:{instance} and its group, whose only consumer is the instance.
  struct stream {
    std::map<std::uint64_t, std::vector<std::string>> entries;  ///< id -> name, value, ...
    std::uint64_t last_delivered = 0;
    std::set<std::uint64_t> pending;  ///< Delivered and not acknowledged.
  };
  /// An entry of commands:responses.
  struct response {
    std::string command_id;
    std::string status;
    std::string response;
    std::string failure_reason;
    std::string imei;
  };
  /// An entry of a device's journal (command_dispatched or command_resolved).
  struct event {
    std::string imei;
    std::string type;
    std::string instance;
    std::string command_id;
    std::string status;
    std::string failure_reason;
  };
  using fields = std::map<std::string, std::string>;

  std::map<std::string, stream> streams;
  /// commands:offline:{imei}, each command decoded; an empty one stands for JSON that
  /// does not decode.
  std::map<std::string, std::vector<fields>> offline;
  std::map<std::string, char> markers;  ///< commands:id:{command_id}: 'p' waits, 'a' answered
  std::vector<response> responses;      ///< Every shard's, in order.
  std::vector<event> journal;           ///< Every device's, in order.
  std::set<std::string> with_streams;   ///< commands:instances
  std::shared_ptr<fake_registry> registry = std::make_shared<fake_registry>();
  bool down = false;  ///< every call fails with an IO error, nothing changes
  /// The calls (by their name: "read_new", "dispatched_all", ...) that fail as with
  /// `down`, while the others are served.
  std::set<std::string> failing;
  /// Calls take effect but each resolve_all outcome fails, as when fewer replicas than
  /// required confirmed the batch.
  bool unconfirmed = false;
  std::size_t reads = 0;    ///< read_new calls, failed ones too
  std::size_t batches = 0;  ///< resolve_all calls, failed ones too
  std::uint64_t last_id = 0;

  /// XADD: appends `flat` (name, value, ...) to `instance`'s stream, creating it.
  std::string append(const std::string& instance, std::vector<std::string> flat) {
    streams[instance].entries.emplace(++last_id, std::move(flat));
    return std::to_string(last_id) + "-0";
  }
  /// What tgw_cmd_publish leaves when it sends a command to `instance`: the entry, and
  /// the command's marker waiting for its outcome.
  std::string send_to(const std::string& instance, const std::string& command_id,
                      const std::string& imei, std::int64_t expires_at = 0) {
    markers[command_id] = 'p';
    return append(instance, {"command_id", command_id, "target_imei", imei, "codec", "12",
                             "payload", "getinfo", "expires_at", std::to_string(expires_at)});
  }
  [[nodiscard]] std::size_t responses_to(const std::string& command_id) const {
    return static_cast<std::size_t>(
        std::count_if(responses.begin(), responses.end(),
                      [&](const response& r) { return r.command_id == command_id; }));
  }
  [[nodiscard]] std::size_t journaled(const std::string& command_id,
                                      const std::string& type) const {
    return static_cast<std::size_t>(std::count_if(
        journal.begin(), journal.end(),
        [&](const event& e) { return e.command_id == command_id && e.type == type; }));
  }
  /// Entries in `instance`'s stream, and those of them delivered and not acknowledged.
  [[nodiscard]] std::size_t length(const std::string& instance) const {
    const auto it = streams.find(instance);
    return it == streams.end() ? 0 : it->second.entries.size();
  }
  [[nodiscard]] std::size_t pending(const std::string& instance) const {
    const auto it = streams.find(instance);
    return it == streams.end() ? 0 : it->second.pending.size();
  }
};

class fake_command_store final : public ports::command_store {
 public:
  using command_entry = ports::command_entry;
  using resolution = ports::resolution;
  using dispatch_outcome = ports::dispatch_outcome;
  using dispatch_status = ports::dispatch_status;

  fake_command_store(std::shared_ptr<fake_commands> world, std::string instance,
                     std::size_t max_payload = 512)
      : world_(std::move(world)), instance_(std::move(instance)), max_payload_(max_payload) {}

  bool prepare(ports::store_failure& error) override {
    if (refused(error, "prepare")) return false;
    ensure_group();
    return true;
  }
  std::optional<std::vector<command_entry>> read_pending(ports::store_failure& error) override {
    if (refused(error, "read_pending")) return std::nullopt;
    std::vector<command_entry> out;
    const auto it = world_->streams.find(instance_);
    if (it == world_->streams.end()) {
      ensure_group();  // NOGROUP: re-created, nothing to read
      return out;
    }
    for (const std::uint64_t id : it->second.pending) {
      const auto entry = it->second.entries.find(id);
      const bool present = entry != it->second.entries.end();
      out.push_back(ports::parse_command_entry(id_text(id),
                                               present ? entry->second : std::vector<std::string>{},
                                               present, max_payload_));
    }
    return out;
  }
  std::optional<std::vector<command_entry>> read_new(std::chrono::milliseconds /*block*/,
                                                     std::size_t count,
                                                     ports::store_failure& error) override {
    ++world_->reads;
    if (refused(error, "read_new")) return std::nullopt;
    std::vector<command_entry> out;
    const auto it = world_->streams.find(instance_);
    if (it == world_->streams.end()) {
      ensure_group();
      return out;
    }
    fake_commands::stream& s = it->second;
    for (auto e = s.entries.upper_bound(s.last_delivered);
         e != s.entries.end() && out.size() < count; ++e) {
      s.last_delivered = e->first;
      s.pending.insert(e->first);
      out.push_back(ports::parse_command_entry(id_text(e->first), e->second, true, max_payload_));
    }
    return out;
  }
  bool resolve(const command_entry& entry, const resolution& outcome, ports::store_failure& error,
               std::int64_t /*journal_maxlen*/ = 10000) override {
    if (refused(error, "resolve")) return false;
    apply_resolve(entry, outcome);
    return true;
  }
  std::vector<ports::store_failure> resolve_all(
      std::span<const std::pair<command_entry, resolution>> outcomes,
      std::int64_t /*journal_maxlen*/) override {
    ++world_->batches;
    ports::store_failure error;
    if (refused(error, "resolve_all"))
      return std::vector<ports::store_failure>(outcomes.size(), error);
    for (const auto& [entry, outcome] : outcomes) apply_resolve(entry, outcome);
    return std::vector<ports::store_failure>(
        outcomes.size(), world_->unconfirmed ? unconfirmed_by_replicas() : ports::store_failure{});
  }
  std::vector<dispatch_outcome> dispatched_all(std::span<const command_entry* const> entries,
                                               std::int64_t /*journal_maxlen*/) override {
    ports::store_failure error;
    if (refused(error, "dispatched_all"))
      return std::vector<dispatch_outcome>(entries.size(), {dispatch_status::not_journaled, error});
    std::vector<dispatch_outcome> out(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const command_entry& e = *entries[i];
      if (!is_imei(e.target_imei)) continue;  // no journal to write to
      if (answered(e.command_id)) {
        out[i].status = dispatch_status::answered_already;
        continue;
      }
      world_->journal.push_back(
          {e.target_imei, "command_dispatched", instance_, e.command_id, "", ""});
    }
    return out;
  }
  std::optional<std::size_t> drain_offline(const std::string& imei,
                                           ports::store_failure& error) override {
    if (refused(error, "drain_offline")) return std::nullopt;
    std::size_t moved = 0;
    for (fake_commands::fields c : world_->offline[imei]) {
      c.try_emplace("target_imei", imei);
      std::string reason = malformed(c);
      if (!reason.empty())
        reason = "malformed: " + reason;
      else if (expired(c))
        reason = "expired_before_delivery";
      if (!reason.empty()) {
        respond(c["command_id"], "failed", "", reason, c["target_imei"]);
        if (!c["command_id"].empty()) world_->markers[c["command_id"]] = 'a';
        continue;
      }
      world_->append(instance_, {"command_id", c["command_id"], "target_imei", c["target_imei"],
                                 "codec", c["codec"], "payload", c["payload"], "expires_at",
                                 c["expires_at"].empty() ? "0" : c["expires_at"]});
      ++moved;
    }
    world_->offline.erase(imei);
    return moved;
  }
  std::optional<orphan_counts> adopt_orphans(const std::string& dead,
                                             ports::store_failure& error) override {
    if (refused(error, "adopt_orphans")) return std::nullopt;
    orphan_counts counts;
    const auto it = world_->streams.find(dead);
    if (it != world_->streams.end()) {
      // Moved out first: a re-routed entry is appended to another stream of the map.
      const auto entries = std::move(it->second.entries);
      world_->streams.erase(it);
      for (const auto& [id, flat] : entries) adopt(dead, flat, counts);
    }
    world_->with_streams.erase(dead);
    return counts;
  }
  std::optional<std::vector<std::string>> orphan_candidates(ports::store_failure& error) override {
    if (refused(error, "orphan_candidates")) return std::nullopt;
    std::vector<std::string> dead;
    for (const std::string& instance : world_->with_streams)
      if (!world_->registry->heartbeats.contains(instance)) dead.push_back(instance);
    return dead;
  }
  [[nodiscard]] const std::string& instance_id() const override { return instance_; }

 private:
  static std::string id_text(std::uint64_t id) { return std::to_string(id) + "-0"; }
  static std::uint64_t id_number(const std::string& id) {
    std::uint64_t n = 0;
    std::from_chars(id.data(), id.data() + id.size(), n);
    return n;
  }
  static bool digits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  static bool is_imei(const std::string& s) { return codecs::valid_imei(s); }
  static std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // The Lua library's own checks (malformed() and expired() there), which differ a
  // little from parse_command_entry's: no payload limit, shorter texts.
  static std::string malformed(fake_commands::fields& f) {
    for (const char* name : {"command_id", "target_imei", "codec", "payload"})
      if (f[name].empty()) return std::string("missing field ") + name;
    if (!is_imei(f["target_imei"])) return "bad target_imei";
    if (f["codec"] != "12" && f["codec"] != "14") return "bad codec " + f["codec"];
    if (!f["expires_at"].empty() && !digits(f["expires_at"])) return "bad expires_at";
    return {};
  }
  static bool expired(fake_commands::fields& f) {
    const std::string& text = f["expires_at"];
    std::int64_t at = 0;
    std::from_chars(text.data(), text.data() + text.size(), at);
    return at > 0 && at < now_s();
  }

  bool refused(ports::store_failure& error, const char* call) const {
    if (!world_->down && !world_->failing.contains(call)) return false;
    error = unreachable_store();
    return true;
  }
  void ensure_group() {
    world_->streams.try_emplace(instance_);
    world_->with_streams.insert(instance_);
  }
  [[nodiscard]] bool answered(const std::string& command_id) const {
    const auto it = world_->markers.find(command_id);
    return !command_id.empty() && it != world_->markers.end() && it->second == 'a';
  }
  void respond(const std::string& command_id, const std::string& status,
               const std::string& response, const std::string& reason, const std::string& imei) {
    world_->responses.push_back({command_id, status, response, reason, imei});
  }
  // tgw_cmd_resolve: the XACK always; one response per command; the entry deleted.
  void apply_resolve(const command_entry& entry, const resolution& outcome) {
    const std::uint64_t id = id_number(entry.entry_id);
    const auto s = world_->streams.find(instance_);
    const std::vector<std::string>* found = nullptr;
    if (s != world_->streams.end()) {
      s->second.pending.erase(id);
      if (const auto e = s->second.entries.find(id); e != s->second.entries.end())
        found = &e->second;
    }
    std::string imei = entry.target_imei;
    if (found != nullptr)
      for (std::size_t i = 0; i + 1 < found->size(); i += 2)
        if ((*found)[i] == "target_imei") imei = (*found)[i + 1];
    const bool answer =
        !answered(entry.command_id) && (found != nullptr || !entry.command_id.empty());
    if (answer) {
      respond(entry.command_id, outcome.status, outcome.response, outcome.failure_reason, imei);
      if (is_imei(entry.target_imei))
        world_->journal.push_back({entry.target_imei, "command_resolved", instance_,
                                   entry.command_id, outcome.status, outcome.failure_reason});
      if (!entry.command_id.empty()) world_->markers[entry.command_id] = 'a';
    }
    if (found != nullptr) s->second.entries.erase(id);
  }
  // tgw_cmd_orphans for one entry of a dead instance's stream.
  void adopt(const std::string& dead, const std::vector<std::string>& flat, orphan_counts& counts) {
    fake_commands::fields f;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) f[flat[i]] = flat[i + 1];
    ++counts.handled;
    if (answered(f["command_id"])) return;  // its device answered before the instance died
    const std::string why = malformed(f);
    std::string reason;
    if (!why.empty()) {
      reason = "malformed: " + why;
    } else if (expired(f)) {
      reason = "expired_before_delivery";
    } else {
      const std::string owner = world_->registry->owner_of(f["target_imei"]);
      if (owner != dead && world_->registry->heartbeats.contains(owner) &&
          world_->streams.contains(owner)) {
        world_->append(owner, flat);  // NOMKSTREAM: only to a stream that exists
        ++counts.rerouted;
        return;
      }
      reason = "instance_lost";
    }
    ++counts.failed;
    respond(f["command_id"], "failed", "", reason, f["target_imei"]);
    if (!f["command_id"].empty()) world_->markers[f["command_id"]] = 'a';
    if (why.empty())
      world_->journal.push_back(
          {f["target_imei"], "command_resolved", dead, f["command_id"], "failed", reason});
  }

  std::shared_ptr<fake_commands> world_;
  std::string instance_;
  std::size_t max_payload_;
};

}  // namespace tgw::test
