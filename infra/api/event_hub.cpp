#include "infra/api/event_hub.hpp"

#include <pthread.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <map>
#include <tuple>

#include "infra/api/api_json.hpp"
#include "infra/commands/command_keys.hpp"
#include "infra/json/frame_json.hpp"
#include "infra/redis/shard_agreement.hpp"
#include "infra/redis/stream_pages.hpp"
#include "infra/telemetry/entry_view.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra::api {
namespace {

using clock = std::chrono::steady_clock;
using fields_t = std::vector<std::pair<std::string, std::string>>;

constexpr std::size_t kinds_per_shard = 3;  // records, sessions, responses
constexpr std::size_t read_count = 500;
constexpr std::chrono::milliseconds block{100};
constexpr std::chrono::milliseconds cluster_pause{5};
constexpr std::chrono::milliseconds retry_pause{500};
// A catching-up client gets its next page once its stream holds less than this.
constexpr std::size_t catch_up_backlog = 256 * 1024;

const char* kind_name(std::size_t source) {
  switch (source % kinds_per_shard) {
    case 0:
      return "record";
    case 1:
      return "session";
    default:
      return "command";
  }
}

event_kind kind_of(std::size_t source) {
  switch (source % kinds_per_shard) {
    case 0:
      return event_kind::record;
    case 1:
      return event_kind::session;
    default:
      return event_kind::command;
  }
}

std::string get(const fields_t& f, std::string_view name) {
  for (const auto& [k, v] : f)
    if (k == name) return v;
  return {};
}

// The event's data: a record as `tgw telemetry tail --json` prints it, a session change
// or a command outcome with their fields and times.
json event_data(std::size_t source, const std::string& id, const fields_t& f) {
  switch (source % kinds_per_shard) {
    case 0: {
      const telemetry::entry_map m(f.begin(), f.end());
      return telemetry::entry_json(id, m, nullptr);
    }
    case 1: {
      json j;
      j["stream_id"] = id;
      j["imei"] = get(f, "imei");
      j["type"] = get(f, "type");
      j["instance"] = get(f, "instance");
      put_time(j, "occurred", integer_text(get(f, "at_ms")));
      for (const auto& [k, v] : f)
        if (k != "imei" && k != "type" && k != "instance" && k != "at_ms") j[k] = v;
      return j;
    }
    default: {
      commands::command_record r;
      r.command_id = get(f, "command_id");
      commands::command_response o;
      o.status = get(f, "status");
      o.response = get(f, "response");
      o.response_hex = get(f, "response_hex");
      o.failure_reason = get(f, "failure_reason");
      o.responded_at = integer_text(get(f, "responded_at")).value_or(0);
      fold_outcome(r, o);
      json j;
      j["stream_id"] = id;
      j["command_id"] = r.command_id;
      j["imei"] = get(f, "imei");
      j["status"] = r.status;
      j["response"] = r.response.empty() ? json(nullptr) : json(r.response);
      j["response_hex"] = r.response_hex.empty() ? json(nullptr) : json(r.response_hex);
      j["failure_reason"] = r.failure_reason.empty() ? json(nullptr) : json(r.failure_reason);
      put_time(j, "responded",
               r.resolved_ms == 0 ? std::nullopt : std::optional<std::int64_t>(r.resolved_ms));
      return j;
    }
  }
}

std::string event_text(std::size_t source, const std::string& id, const fields_t& f,
                       const event_cursor& after) {
  std::string out = "id: " + cursor_text(after) + "\nevent: " + kind_name(source) + "\ndata: ";
  out += event_data(source, id, f).dump(-1, ' ', false, json::error_handler_t::replace);
  out += "\n\n";
  return out;
}

bool takes(const event_filter& f, std::size_t source, const fields_t& fields) {
  if ((f.kinds & static_cast<std::uint8_t>(kind_of(source))) == 0) return false;
  return f.imeis.empty() || f.imeis.contains(get(fields, "imei"));
}

std::string closing(std::string_view code, std::string_view message) {
  return "event: closing\ndata: " +
         json{{"code", code}, {"message", message}}.dump(-1, ' ', false,
                                                         json::error_handler_t::replace) +
         "\n\n";
}

}  // namespace

struct event_hub::client {
  std::shared_ptr<http::body_stream> out;
  event_filter filter;
  event_cursor position;  ///< Catching up: how far it has been sent.
  bool gap_checked = false;
};

event_hub::event_hub(redis::connection::options where, event_hub_limits limits)
    : where_(std::move(where)),
      limits_(limits),
      live_thread_([this] { run_live(); }),
      catch_up_thread_([this] { run_catch_up(); }) {}

event_hub::~event_hub() {
  stop_ = true;
  catch_up_wake_.notify_all();
  live_thread_.join();
  catch_up_thread_.join();
  std::vector<waiter> waiting;
  {
    const std::lock_guard lock(mutex_);
    waiting.swap(waiters_);
  }
  for (waiter& w : waiting) w.then(false);
  const std::lock_guard lock(mutex_);
  for (const auto& list : {&live_clients_, &catching_up_})
    for (const auto& c : *list) c->out->end(closing("shutdown", "the API is stopping"));
}

std::size_t event_hub::sources() const {
  const std::lock_guard lock(mutex_);
  return keys_.size();
}

bool event_hub::reading() const {
  const std::lock_guard lock(mutex_);
  return known_;
}

std::size_t event_hub::clients() const {
  const std::lock_guard lock(mutex_);
  return live_clients_.size() + catching_up_.size();
}

bool event_hub::admits(api_error& error) const {
  const std::lock_guard lock(mutex_);
  return admits_locked(error);
}

bool event_hub::admits_locked(api_error& error) const {
  if (!known_) {
    error = {503, "unavailable", "the event streams cannot be read now (Redis unreachable)"};
    return false;
  }
  if (live_clients_.size() + catching_up_.size() >= limits_.max_clients) {
    error = {503, "too_many_streams",
             "this API instance serves " + std::to_string(limits_.max_clients) +
                 " event streams already (--max-event-clients)"};
    return false;
  }
  return true;
}

void event_hub::when_ready(std::chrono::milliseconds within, std::function<void(bool)> then) {
  {
    const std::lock_guard lock(mutex_);
    if (!known_ && !stop_ && waiters_.size() < limits_.max_clients) {
      waiters_.push_back({clock::now() + within, std::move(then)});
      return;
    }
  }
  then(sources() != 0);
}

void event_hub::answer_waiters(bool known) {
  std::vector<waiter> due;
  {
    const std::lock_guard lock(mutex_);
    const auto now = clock::now();
    auto late = std::partition(waiters_.begin(), waiters_.end(),
                               [&](const waiter& w) { return !known && w.until > now; });
    std::move(late, waiters_.end(), std::back_inserter(due));
    waiters_.erase(late, waiters_.end());
  }
  for (waiter& w : due) w.then(known);
}

bool event_hub::subscribe(std::shared_ptr<http::body_stream> out, event_filter filter,
                          std::optional<event_cursor> from, api_error& error) {
  auto c = std::make_shared<client>();
  c->out = std::move(out);
  c->filter = std::move(filter);
  {
    const std::lock_guard lock(mutex_);
    if (!admits_locked(error)) return false;
    if (from && from->size() != keys_.size()) {
      error = {400, "bad_last_event_id", "Last-Event-ID is not an id of this API's events"};
      return false;
    }
    // Tells the browser how soon to reconnect, and the client that the stream is open.
    c->out->push(std::make_shared<const std::string>(": tgw events\nretry: 2000\n\n"));
    if (from && *from != live_) {
      c->position = std::move(*from);
      catching_up_.push_back(c);
    } else {
      live_clients_.push_back(c);
    }
  }
  catch_up_wake_.notify_all();
  return true;
}

bool event_hub::know_sources(redis::connection& conn) {
  std::string error;
  std::optional<redis::key_shards> shards;
  if (!conn.ensure_connected(error)) return false;
  if (!conn.settings().where.via_cluster()) {
    shards = redis::key_shards{};
  } else {
    shards = redis::read_key_shards(conn, error);
    if (!shards) return false;
  }
  std::vector<std::string> keys;
  for (std::uint32_t s = 0; s < shards->count(); ++s) {
    const std::string& p = shards->prefix(s);
    keys.push_back(telemetry::keys::telemetry_stream_in(p));
    keys.push_back(telemetry::keys::sessions_stream_in(p));
    keys.push_back(commands::keys::responses_in(p));
  }
  event_cursor newest(keys.size(), "0-0");
  std::vector<std::vector<std::string>> reads;
  for (const std::string& k : keys) reads.push_back({"XREVRANGE", k, "+", "-", "COUNT", "1"});
  const auto replies = conn.pipeline(reads);
  if (replies.size() != reads.size()) return false;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) return false;
    const auto e = redis::stream_entries(replies[i]);
    if (!e.empty()) newest[i] = e.front().id;
  }
  const std::lock_guard lock(mutex_);
  // Back after a Redis failure (or a failover) with the same streams: the live clients
  // go on from where they were, so that what was written meanwhile reaches them too.
  if (keys != keys_ || live_.size() != keys.size()) live_ = std::move(newest);
  shards_ = std::move(*shards);
  keys_ = std::move(keys);
  known_ = true;
  return true;
}

bool event_hub::refresh_positions(redis::connection& conn) {
  std::vector<std::string> keys;
  {
    const std::lock_guard lock(mutex_);
    keys = keys_;
  }
  std::vector<std::vector<std::string>> reads;
  for (const std::string& k : keys) reads.push_back({"XREVRANGE", k, "+", "-", "COUNT", "1"});
  const auto replies = conn.pipeline(reads);
  if (replies.size() != reads.size()) return false;
  const std::lock_guard lock(mutex_);
  if (!live_clients_.empty()) return true;  // a client came meanwhile: the reads go on
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) return false;
    const auto e = redis::stream_entries(replies[i]);
    if (!e.empty() && stream_id_before(live_[i], e.front().id)) live_[i] = e.front().id;
  }
  return true;
}

void event_hub::run_live() {
  ::pthread_setname_np(::pthread_self(), "tgw.api.events");
  redis::connection::options o = where_;
  o.io_timeout = std::max(o.io_timeout, std::chrono::milliseconds{3000});
  while (!stop_) {
    redis::connection conn(o);
    bool ok = know_sources(conn);
    answer_waiters(ok);
    while (ok && !stop_) {
      bool idle;
      {
        const std::lock_guard lock(mutex_);
        idle = live_clients_.empty();
      }
      if (idle) {
        // Nobody follows live: the positions only keep up, nothing is read or made.
        ok = refresh_positions(conn);
        std::this_thread::sleep_for(block);
      } else {
        ok = read_round(conn);
      }
      keepalive();
    }
    if (stop_) break;
    {
      const std::lock_guard lock(mutex_);
      known_ = false;
    }
    std::this_thread::sleep_for(retry_pause);
    answer_waiters(false);
  }
}

bool event_hub::read_round(redis::connection& conn) {
  event_cursor from;
  std::vector<std::string> keys;
  {
    const std::lock_guard lock(mutex_);
    from = live_;
    keys = keys_;
  }
  // Per source, the entries after its position.
  std::vector<std::vector<redis::stream_entry>> got(keys.size());
  bool any = false;
  if (!conn.settings().where.via_cluster()) {
    std::vector<std::string> argv = {
        "XREAD",  "COUNT", std::to_string(read_count), "BLOCK", std::to_string(block.count()),
        "STREAMS"};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), from.begin(), from.end());
    const redis::value v = conn.command(argv);
    if (v.is_error()) return false;
    for (const redis::value& stream : v.elements) {
      if (stream.elements.size() != 2) continue;
      const auto at = std::find(keys.begin(), keys.end(), stream.elements[0].text);
      if (at == keys.end()) continue;
      got[static_cast<std::size_t>(at - keys.begin())] = redis::stream_entries(stream.elements[1]);
      any = true;
    }
  } else {
    // Each source is in a slot of its own: one read each, pipelined per master.
    std::vector<std::vector<std::string>> reads;
    for (std::size_t i = 0; i < keys.size(); ++i)
      reads.push_back({"XREAD", "COUNT", std::to_string(read_count), "STREAMS", keys[i], from[i]});
    const auto replies = conn.pipeline(reads);
    if (replies.size() != reads.size()) return false;
    for (std::size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].is_error()) return false;
      if (replies[i].elements.empty() || replies[i].elements[0].elements.size() != 2) continue;
      got[i] = redis::stream_entries(replies[i].elements[0].elements[1]);
      any = any || !got[i].empty();
    }
    if (!any) std::this_thread::sleep_for(cluster_pause);
  }
  if (!any) return true;

  const std::lock_guard lock(mutex_);
  // Clients with the same filter share one buffer per round.
  std::map<event_filter, std::vector<std::shared_ptr<client>>> groups;
  for (const auto& c : live_clients_) groups[c->filter].push_back(c);
  std::vector<std::pair<const event_filter*, std::string>> batches;
  for (const auto& [f, members] : groups) batches.emplace_back(&f, std::string());
  for (std::size_t source = 0; source < got.size(); ++source) {
    for (const redis::stream_entry& e : got[source]) {
      live_[source] = e.id;
      std::optional<std::string> text;
      for (auto& [f, bytes] : batches) {
        if (!takes(*f, source, e.fields)) continue;
        if (!text) text = event_text(source, e.id, e.fields, live_);
        bytes += *text;
        sent_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  std::size_t g = 0;
  for (auto& [f, members] : groups) {
    std::string& bytes = batches[g++].second;
    if (bytes.empty()) continue;
    const auto shared = std::make_shared<const std::string>(std::move(bytes));
    for (const auto& c : members) {
      if (c->out->push(shared) == http::push_result::over_budget) {
        cut_.fetch_add(1, std::memory_order_relaxed);
        c->out->cut(closing("slow_client",
                            "this client reads events slower than they come; reconnect with "
                            "Last-Event-ID " +
                                cursor_text(live_) + " or an earlier id to go on without a gap"));
      }
    }
  }
  std::erase_if(live_clients_, [](const auto& c) { return c->out->ended(); });
  return true;
}

void event_hub::keepalive() {
  const auto now = clock::now();
  if (now - last_keepalive_ < limits_.keepalive) return;
  last_keepalive_ = now;
  static const auto ping = std::make_shared<const std::string>(": keepalive\n\n");
  const std::lock_guard lock(mutex_);
  for (const auto& list : {&live_clients_, &catching_up_})
    for (const auto& c : *list) (void)c->out->push(ping);
  std::erase_if(live_clients_, [](const auto& c) { return c->out->ended(); });
}

void event_hub::run_catch_up() {
  ::pthread_setname_np(::pthread_self(), "tgw.api.resume");
  redis::connection::options o = where_;
  redis::connection conn(o);
  while (!stop_) {
    std::vector<std::shared_ptr<client>> todo;
    std::vector<std::string> keys;
    event_cursor target;
    {
      std::unique_lock lock(mutex_);
      catch_up_wake_.wait_for(lock, block, [this] { return stop_ || !catching_up_.empty(); });
      std::erase_if(catching_up_, [](const auto& c) { return c->out->ended(); });
      todo = catching_up_;
      keys = keys_;
      target = live_;
    }
    bool progressed = false;
    for (const auto& c : todo) {
      if (c->out->queued_bytes() > catch_up_backlog) continue;
      if (!c->gap_checked) {
        // Entries after the client's position that are gone (trimmed by MAXLEN or
        // retention) cannot be sent: it is told so, once, before what is left.
        c->gap_checked = true;
        for (std::size_t i = 0; i < keys.size(); ++i) {
          const redis::value info = conn.command({"XINFO", "STREAM", keys[i]});
          const redis::value* deleted = redis::map_field(info, "max-deleted-entry-id");
          if (deleted != nullptr && stream_id_before(c->position[i], deleted->text)) {
            c->out->push(std::make_shared<const std::string>(
                "event: gap\ndata: " +
                json{{"stream", keys[i]},
                     {"after", c->position[i]},
                     {"message",
                      "events of this stream after the position asked for were "
                      "trimmed before they could be sent again"}}
                    .dump() +
                "\n\n"));
          }
        }
      }
      std::string bytes;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!stream_id_before(c->position[i], target[i])) continue;
        const redis::value v = conn.command({"XRANGE", keys[i], "(" + c->position[i], target[i],
                                             "COUNT", std::to_string(read_count)});
        if (v.is_error()) break;
        for (const redis::stream_entry& e : redis::stream_entries(v)) {
          c->position[i] = e.id;
          if (takes(c->filter, i, e.fields)) {
            bytes += event_text(i, e.id, e.fields, c->position);
            sent_.fetch_add(1, std::memory_order_relaxed);
          }
        }
        // An empty page below the target: what is left there was deleted.
        if (redis::stream_entries(v).empty()) c->position[i] = target[i];
        progressed = true;
        break;  // one page a turn, so that every resuming client moves
      }
      if (!bytes.empty() && c->out->push(std::make_shared<const std::string>(std::move(bytes))) ==
                                http::push_result::over_budget) {
        cut_.fetch_add(1, std::memory_order_relaxed);
        c->out->cut(closing("slow_client",
                            "this client reads events slower than they come; "
                            "reconnect with Last-Event-ID " +
                                cursor_text(c->position)));
      }
      const std::lock_guard lock(mutex_);
      if (c->position == live_) {
        std::erase(catching_up_, c);
        live_clients_.push_back(c);
      }
    }
    if (!progressed) std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

}  // namespace tgw::infra::api
