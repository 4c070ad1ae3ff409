#include "infra/commands/command_history.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "infra/commands/command_keys.hpp"
#include "infra/redis/stream_pages.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra::commands {
namespace {

std::int64_t number(const std::string& text) {
  std::int64_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

void set_if(std::string& to, const std::string& value) {
  if (!value.empty()) to = value;
}

/// What is known of each command of one device, merged from every source by id.
class history {
 public:
  command_record& of(const std::string& command_id) {
    auto [it, added] = records_.try_emplace(command_id);
    if (added) {
      it->second.command_id = command_id;
      arrival_.push_back(command_id);
    }
    return it->second;
  }

  void queued(const std::string& raw) {
    const auto j = nlohmann::json::parse(raw, nullptr, false);
    if (!j.is_object() || !j.contains("command_id") || !j["command_id"].is_string()) return;
    auto text = [&](const char* name) {
      const auto it = j.find(name);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    command_record& r = of(text("command_id"));
    set_if(r.payload, text("payload"));
    set_if(r.codec, text("codec"));
    if (const std::string e = text("expires_at"); !e.empty()) r.expires_at_s = number(e);
    in_queue_.push_back(r.command_id);
  }

  void outbound(const std::string& instance, const redis::stream_entry& e) {
    command_record& r = of(e.get("command_id"));
    set_if(r.payload, e.get("payload"));
    set_if(r.codec, e.get("codec"));
    r.expires_at_s = number(e.get("expires_at"));
    r.instance = instance;
    in_stream_.push_back(r.command_id);
  }

  void journal(const redis::stream_entry& e) {
    const std::string type = e.get("type");
    const std::string id = e.get("command_id");
    if (id.empty()) return;
    journal_order_.try_emplace(id, journal_order_.size());
    const std::int64_t at = number(e.get("at_ms"));
    if (type == "command_published") {
      command_record& r = of(id);
      r.published_ms = at;
      set_if(r.payload, e.get("payload"));
      set_if(r.codec, e.get("codec"));
      set_if(r.publisher, e.get("publisher"));
      set_if(r.instance, e.get("instance"));
      if (r.expires_at_s == 0) r.expires_at_s = number(e.get("expires_at"));
    } else if (type == "command_dispatched") {
      command_record& r = of(id);
      r.dispatched_ms = at;
      set_if(r.codec, e.get("codec"));
      set_if(r.instance, e.get("instance"));
    } else if (type == "command_resolved") {
      outcome(of(id), at, e);
      set_if(of(id).instance, e.get("instance"));
    }
  }

  void response(const redis::stream_entry& e) {
    const std::string id = e.get("command_id");
    if (id.empty()) return;
    const std::int64_t at = number(e.get("responded_at"));
    outcome(of(id), at != 0 ? at : redis::stream_id_ms(e.id), e);
  }

  /// Commands with no outcome and in no queue or stream: their marker says whether
  /// they were answered since (or are on their way between two of the reads).
  [[nodiscard]] std::vector<std::string> unplaced() const {
    std::vector<std::string> out;
    for (const auto& [id, r] : records_)
      if (!outcome_.contains(id) && !contains(in_queue_, id) && !contains(in_stream_, id))
        out.push_back(id);
    return out;
  }

  /// Every command with its status, in publishing order.
  std::vector<command_record> finish(const std::map<std::string, std::string>& markers) {
    for (auto& [id, r] : records_) {
      if (outcome_.contains(id)) continue;
      if (contains(in_queue_, id)) {
        r.status = "queued";
      } else if (contains(in_stream_, id)) {
        r.status = r.dispatched_ms != 0 ? "dispatched" : "sent";
      } else if (const auto m = markers.find(id); m != markers.end() && m->second == "a") {
        r.status = "answered";
      } else if (m != markers.end() && m->second.starts_with("p")) {
        r.status = r.dispatched_ms != 0 ? "dispatched" : "sent";
      } else {
        r.status = "unknown";
      }
    }
    // By the first time known of each; within one millisecond in the order the journal
    // has them (the order they were published), then in the order the sources listed
    // them. Unknown times last.
    struct keyed {
      std::int64_t first_ms;
      std::size_t journal_order;
      std::size_t arrival;
      const std::string* id;
    };
    std::vector<keyed> order;
    order.reserve(arrival_.size());
    for (std::size_t i = 0; i < arrival_.size(); ++i) {
      const std::int64_t t = records_.at(arrival_[i]).first_ms();
      const auto j = journal_order_.find(arrival_[i]);
      order.push_back({t == 0 ? std::numeric_limits<std::int64_t>::max() : t,
                       j == journal_order_.end() ? journal_order_.size() : j->second, i,
                       &arrival_[i]});
    }
    std::sort(order.begin(), order.end(), [](const keyed& a, const keyed& b) {
      return std::tie(a.first_ms, a.journal_order, a.arrival) <
             std::tie(b.first_ms, b.journal_order, b.arrival);
    });
    std::vector<command_record> out;
    out.reserve(order.size());
    for (const keyed& k : order) out.push_back(std::move(records_.at(*k.id)));
    return out;
  }

 private:
  static bool contains(const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  }

  void outcome(command_record& r, std::int64_t at, const redis::stream_entry& e) {
    r.resolved_ms = at;
    r.status = e.get("status");
    set_if(r.response, e.get("response"));
    set_if(r.response_hex, e.get("response_hex"));
    set_if(r.failure_reason, e.get("failure_reason"));
    outcome_.insert(r.command_id);
  }

  std::map<std::string, command_record> records_;
  std::vector<std::string> arrival_;
  std::map<std::string, std::size_t> journal_order_;  ///< Of each command's first event.
  std::vector<std::string> in_queue_;
  std::vector<std::string> in_stream_;
  std::set<std::string> outcome_;
};

std::optional<std::vector<command_record>> read(redis::connection& conn,
                                                const redis::key_shards& shards,
                                                const std::string& imei, bool with_responses,
                                                std::int64_t since_ms, std::string& error) {
  const std::string& prefix = shards.prefix_of(imei);
  history h;
  // Oldest stage first: the offline queue, the streams, the journal, the responses. A
  // command moves only forward through them, so one that moves while they are read is
  // still seen in a later one.
  const redis::value queue = conn.command({"LRANGE", keys::offline(imei, prefix), "0", "-1"});
  if (queue.is_error()) {
    error = queue.text;
    return std::nullopt;
  }
  for (const redis::value& raw : queue.elements) h.queued(raw.text);
  const redis::value instances =
      conn.command({"SMEMBERS", keys::instances_with_streams_in(prefix)});
  if (instances.is_error()) {
    error = instances.text;
    return std::nullopt;
  }
  for (const redis::value& instance : instances.elements) {
    const bool ok = redis::for_each_entry(
        conn, keys::outbound(instance.text, prefix), 0,
        [&](redis::stream_entry&& e) {
          if (e.get("target_imei") == imei && !e.get("command_id").empty())
            h.outbound(instance.text, e);
        },
        error);
    if (!ok) return std::nullopt;
  }
  if (!redis::for_each_entry(
          conn, telemetry::keys::journal(imei, prefix), 0,
          [&](redis::stream_entry&& e) { h.journal(e); }, error))
    return std::nullopt;
  if (with_responses && !redis::for_each_entry(
                            conn, keys::responses_in(prefix), since_ms,
                            [&](redis::stream_entry&& e) {
                              if (e.get("imei") == imei) h.response(e);
                            },
                            error))
    return std::nullopt;

  std::map<std::string, std::string> markers;
  const std::vector<std::string> unplaced = h.unplaced();
  if (!unplaced.empty()) {
    std::vector<std::vector<std::string>> gets;
    for (const std::string& id : unplaced) gets.push_back({"GET", keys::marker(id, prefix)});
    const std::vector<redis::value> replies = conn.pipeline(gets);
    for (std::size_t i = 0; i < replies.size() && i < unplaced.size(); ++i) {
      if (replies[i].is_error()) {
        error = replies[i].text;
        return std::nullopt;
      }
      if (!replies[i].is_nil()) markers[unplaced[i]] = replies[i].text;
    }
  }
  std::vector<command_record> all = h.finish(markers);
  std::erase_if(all, [&](const command_record& r) {
    return !r.open() && (!with_responses || (since_ms > 0 && r.first_ms() < since_ms));
  });
  return all;
}

}  // namespace

std::int64_t command_record::first_ms() const noexcept {
  std::int64_t first = 0;
  for (const std::int64_t t : {published_ms, dispatched_ms, resolved_ms})
    if (t != 0 && (first == 0 || t < first)) first = t;
  return first;
}

std::optional<std::vector<command_record>> read_command_history(redis::connection& conn,
                                                                const redis::key_shards& shards,
                                                                const std::string& imei,
                                                                std::int64_t since_ms,
                                                                std::string& error) {
  return read(conn, shards, imei, true, since_ms, error);
}

std::optional<std::vector<command_record>> read_open_commands(redis::connection& conn,
                                                              const redis::key_shards& shards,
                                                              const std::string& imei,
                                                              std::string& error) {
  return read(conn, shards, imei, false, 0, error);
}

}  // namespace tgw::infra::commands
