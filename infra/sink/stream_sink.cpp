#include "infra/sink/stream_sink.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <spdlog/spdlog.h>

#include "infra/process/termination.hpp"
#include "infra/sink/position_writer.hpp"
#include "infra/sink/telemetry_entry.hpp"

namespace tgw::infra::sink {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// Retries of Redis and PostgreSQL wait this long first, then twice as long each time.
constexpr std::chrono::milliseconds first_backoff = 500ms;
constexpr std::chrono::milliseconds max_backoff = 10s;

struct stream_sink::batch {
  std::vector<std::string> ids;  ///< Every entry read, to acknowledge after the commit.
  std::vector<position_row> rows;
  std::vector<rejected_entry> rejected;
  prepared_rows prepared;   ///< The rows for COPY, made on the reading thread.
  std::size_t deleted = 0;  ///< Pending entries trimmed away: nothing to store.
  std::int64_t newest_stored_ms = 0;
  [[nodiscard]] bool empty() const noexcept { return ids.empty(); }
};

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// The queue between the reading thread and the committers: one batch waits at most.
class stream_sink::handoff {
 public:
  /// Waits until a committer has taken the previous batch. False once closed.
  bool push(batch&& b) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !waiting_ || closed_; });
    if (closed_) return false;
    waiting_ = std::move(b);
    changed_.notify_all();
    return true;
  }
  /// The next batch; nullopt once closed and empty. The batch counts as in progress
  /// until done() is called.
  std::optional<batch> pop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ || closed_; });
    if (!waiting_) return std::nullopt;
    std::optional<batch> b = std::move(waiting_);
    waiting_.reset();
    ++busy_;
    changed_.notify_all();
    return b;
  }
  void done() {
    std::lock_guard lock(mutex_);
    --busy_;
    changed_.notify_all();
  }
  /// Waits until every batch handed over is committed and acknowledged (or closed).
  void wait_idle() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return (!waiting_ && busy_ == 0) || closed_; });
  }
  [[nodiscard]] bool idle() {
    std::lock_guard lock(mutex_);
    return !waiting_ && busy_ == 0;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<batch> waiting_;
  int busy_ = 0;
  bool closed_ = false;
};

stream_sink::stream_sink(sink_settings settings, redis::connection& reader,
                         std::vector<committer_link> committers, telemetry::io_dictionary names,
                         sink_counters& counters)
    : s_(std::move(settings)),
      redis_(reader),
      committers_(std::move(committers)),
      names_(std::move(names)),
      counters_(counters),
      handoff_(std::make_unique<handoff>()) {}

stream_sink::~stream_sink() = default;

bool stream_sink::stopping() {
  if (stop_.load()) return true;
  // Either thread may take the signal; both see it through stop_.
  if (process::termination_requested()) stop_ = true;
  return stop_.load();
}

bool stream_sink::pause(std::chrono::milliseconds how_long) {
  const auto until = clock_type::now() + how_long;
  while (clock_type::now() < until) {
    if (stopping()) return false;
    std::this_thread::sleep_for(std::min<clock_type::duration>(100ms, until - clock_type::now()));
  }
  return true;
}

bool stream_sink::back_off(std::chrono::milliseconds& wait) {
  if (!pause(wait)) return false;
  wait = std::min<std::chrono::milliseconds>(wait * 2, max_backoff);
  return true;
}

bool stream_sink::ensure_group() {
  std::chrono::milliseconds backoff = first_backoff;
  while (true) {
    // Look before creating: XGROUP CREATE is refused when Redis is out of memory, which
    // is exactly when the sink must get going and drain the stream.
    const auto groups = redis_.command({"XINFO", "GROUPS", s_.stream});
    if (groups.is_array())
      for (const auto& g : groups.elements)
        if (const auto* name = redis::map_field(g, "name"); name && name->text == s_.group) {
          counters_.redis_up = true;
          return true;
        }
    const auto r =
        redis_.command({"XGROUP", "CREATE", s_.stream, s_.group, s_.group_start, "MKSTREAM"});
    if (!r.is_error()) {
      spdlog::info("sink: created consumer group {} on {} at {}", s_.group, s_.stream,
                   s_.group_start);
      counters_.redis_up = true;
      return true;
    }
    if (redis::error_is(r, "BUSYGROUP")) {
      counters_.redis_up = true;
      return true;
    }
    counters_.redis_up = false;
    ++counters_.redis_failures;
    spdlog::warn("sink: cannot create consumer group {} on {}: {}; retrying in {} ms", s_.group,
                 s_.stream, r.text, backoff.count());
    if (!back_off(backoff)) return false;
  }
}

bool stream_sink::read(batch& b, source from) {
  const std::string count = std::to_string(s_.batch);
  redis::value reply;
  redis::value* entries = nullptr;
  if (from == source::claims) {
    reply = redis_.command({"XAUTOCLAIM", s_.stream, s_.group, s_.consumer,
                            std::to_string(s_.claim_idle.count()), claim_cursor_, "COUNT", count});
    if (reply.is_error() || !reply.is_array() || reply.elements.size() < 2) {
      if (!reply.is_error()) reply = redis::value::make_error("unexpected XAUTOCLAIM reply");
    } else {
      claim_cursor_ = reply.elements[0].text;
      entries = &reply.elements[1];
      // Redis 7 names the claimed ids whose entries were trimmed away (and drops them
      // from the pending list itself).
      if (reply.elements.size() > 2) b.deleted += reply.elements[2].elements.size();
    }
  } else {
    const std::string block = std::to_string(s_.block.count());
    if (from == source::own_pending)
      reply = redis_.command({"XREADGROUP", "GROUP", s_.group, s_.consumer, "COUNT", count,
                              "STREAMS", s_.stream, "0"});
    else if (s_.until_drained)  // Drained means nothing there now: no wait for more.
      reply = redis_.command({"XREADGROUP", "GROUP", s_.group, s_.consumer, "COUNT", count,
                              "STREAMS", s_.stream, ">"});
    else
      reply = redis_.command({"XREADGROUP", "GROUP", s_.group, s_.consumer, "COUNT", count, "BLOCK",
                              block, "STREAMS", s_.stream, ">"});
    if (!reply.is_error() && reply.is_array() && !reply.elements.empty())
      entries = &reply.elements.front().elements.at(1);
  }
  if (reply.is_error()) {
    if (redis::error_is(reply, "NOGROUP")) {
      // Someone destroyed the group (or Redis restarted empty): make it again.
      spdlog::warn("sink: consumer group {} is gone from {}; creating it again", s_.group,
                   s_.stream);
      (void)ensure_group();
      return false;
    }
    ++counters_.redis_failures;
    if (counters_.redis_up.exchange(false))
      spdlog::error("sink: Redis {}: {}; retrying", redis_.server(), reply.text);
    return false;
  }
  if (!counters_.redis_up.exchange(true)) spdlog::info("sink: Redis {} is back", redis_.server());
  if (entries == nullptr) return true;
  if (from == source::claims) counters_.claimed += entries->elements.size();
  // The reply is ours: its strings move into the fields rather than being copied.
  for (auto& entry : entries->elements) {
    const std::string& id = entry.elements.at(0).text;
    b.ids.push_back(id);
    // A pending entry trimmed from the stream since it was delivered comes back with no
    // fields: there is nothing left to store, only the acknowledgement.
    if (entry.elements.size() < 2 || !entry.elements[1].is_array()) {
      ++b.deleted;
      continue;
    }
    entry_fields fields;
    auto& kv = entry.elements[1].elements;
    fields.reserve(kv.size() / 2);
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2)
      fields.emplace_back(std::move(kv[i].text), std::move(kv[i + 1].text));
    auto parsed = parse_entry(id, fields, names_);
    if (auto* row = std::get_if<position_row>(&parsed)) {
      if (auto why = outside_window(*row, s_.window)) {
        warn_once(row->imei, *why);
        b.rejected.push_back(reject_entry(id, fields, std::move(*why)));
        continue;
      }
      if (!row->io_size_mismatches.empty()) warn_once(row->io_size_mismatches);
      if (!row->extra.empty()) ++counters_.unknown_fields;
      b.newest_stored_ms = std::max(b.newest_stored_ms, row->stored_ms);
      b.rows.push_back(std::move(*row));
    } else {
      auto& rejected = std::get<rejected_entry>(parsed);
      spdlog::error("sink: entry {} rejected: {}; kept in rejected_entries", id, rejected.reason);
      b.rejected.push_back(std::move(rejected));
    }
  }
  return true;
}

void stream_sink::warn_once(const std::string& imei, const std::string& why) {
  // Bounded: a fleet of wrong clocks is said of its first 10,000 devices.
  constexpr std::size_t most = 10'000;
  if (clock_warned_.size() > most || !clock_warned_.insert(imei).second) return;
  if (clock_warned_.size() > most) {
    spdlog::warn(
        "sink: more than {} devices with records outside the time window; no more "
        "are named (teltonika_sink_rejected_total counts them)",
        most);
    return;
  }
  spdlog::warn(
      "sink: device {} sends records outside the plausible time window, kept in "
      "rejected_entries and not in positions (a day partition each would pile up): "
      "{}; its clock is wrong, or widen the window. Its later ones are not logged.",
      imei, why);
}

void stream_sink::warn_once(const std::vector<telemetry::io_size_mismatch>& mismatches) {
  for (const telemetry::io_size_mismatch& m : mismatches) {
    if (!size_warned_.emplace(m.id, m.size, m.dictionary_size).second) continue;
    spdlog::warn(
        "sink: IO element {} came {} bytes wide, the IO dictionary says {}: io_named "
        "reads it at the wire's size; check --model or --io-dictionary against the "
        "devices' model and firmware",
        m.id, int{m.size}, m.dictionary_size);
  }
}

bool stream_sink::store(committer_link& link, position_writer& writer, const batch& b) {
  if (b.prepared.count == 0 && b.rejected.empty()) return true;
  std::chrono::milliseconds backoff = first_backoff;
  while (true) {
    const auto started = clock_type::now();
    const write_outcome out = writer.write(b.prepared, b.rejected);
    if (out.committed) {
      const double took = std::chrono::duration<double>(clock_type::now() - started).count();
      counters_.commit_seconds_sum.fetch_add(took);  // Committers add concurrently.
      counters_.records += static_cast<std::uint64_t>(out.inserted);
      counters_.duplicates += static_cast<std::uint64_t>(out.duplicates);
      counters_.rejected += static_cast<std::uint64_t>(out.rejected);
      ++counters_.batches;
      if (out.duplicates > 0)
        spdlog::info(
            "sink: {} of {} rows were committed before (a batch delivered again); "
            "skipped",
            out.duplicates, b.prepared.count);
      if (!counters_.postgres_up.exchange(true))
        spdlog::info("sink: PostgreSQL {} takes writes", link.pg->describe());
      if (b.newest_stored_ms > 0)
        counters_.lag_seconds = static_cast<double>(now_ms() - b.newest_stored_ms) / 1000.0;
      return true;
    }
    ++counters_.postgres_failures;
    const bool was_up = counters_.postgres_up.exchange(false);
    if (was_up || backoff >= max_backoff)
      spdlog::error("sink: PostgreSQL: {}; batch of {} entries not committed, retrying in {} ms",
                    out.error, b.ids.size(), backoff.count());
    if (!out.connection_lost && was_up)
      spdlog::error("sink: this needs an operator: the sink retries until it is fixed");
    if (!back_off(backoff)) return false;
  }
}

bool stream_sink::acknowledge(redis::connection& acker, const batch& b) {
  std::vector<std::string> argv{"XACK", s_.stream, s_.group};
  argv.insert(argv.end(), b.ids.begin(), b.ids.end());
  std::chrono::milliseconds backoff = first_backoff;
  while (true) {
    const auto r = acker.command(argv);
    if (!r.is_error()) break;
    // Committed, so acknowledging again is always right; until then the entries stay
    // pending, and a crash meanwhile only delivers them again.
    ++counters_.redis_failures;
    if (counters_.redis_up.exchange(false) || backoff >= max_backoff)
      spdlog::error(
          "sink: XACK on Redis {}: {}; the batch is committed and stays pending until "
          "it is acknowledged, retrying in {} ms",
          acker.server(), r.text, backoff.count());
    if (!back_off(backoff)) return false;
  }
  counters_.deleted += b.deleted;
  return true;
}

void stream_sink::commit_loop(committer_link& link, position_writer& writer) {
  while (auto b = handoff_->pop()) {
    // Stopping during a retry leaves the batch unacknowledged, to be delivered again.
    const bool done = store(link, writer, *b) && acknowledge(*link.acker, *b);
    handoff_->done();
    if (!done) break;
  }
  // A committer stops only when the sink stops: the reader must not wait on it.
  handoff_->close();
}

void stream_sink::progress() {
  const auto now = clock_type::now();
  if (now < next_progress_) return;
  const std::uint64_t records = counters_.records.load();
  const double seconds =
      std::max(0.001, std::chrono::duration<double>(now - last_progress_).count());
  spdlog::info(
      "sink: {} records committed ({:.0f}/s), {} duplicates skipped, {} rejected, "
      "{} claimed, lag {:.2f} s",
      records, static_cast<double>(records - records_at_progress_) / seconds,
      counters_.duplicates.load(), counters_.rejected.load(), counters_.claimed.load(),
      counters_.lag_seconds.load());
  records_at_progress_ = records;
  last_progress_ = now;
  next_progress_ = now + s_.progress_interval;
}

int stream_sink::run() {
  spdlog::info("sink: {} -> PostgreSQL {}, group {} as consumer {}, batches of {}, {} committers",
               s_.stream, committers_.front().pg->describe(), s_.group, s_.consumer, s_.batch,
               committers_.size());
  if (!ensure_group()) return 0;
  next_claim_ = clock_type::now();  // Entries a stopped consumer left: look at once.
  next_progress_ = clock_type::now() + s_.progress_interval;
  last_progress_ = clock_type::now();
  records_at_progress_ = counters_.records.load();
  std::vector<std::thread> threads;
  for (auto& link : committers_)
    threads.emplace_back([this, &link] {
      position_writer writer(*link.pg, s_.stream, s_.failpoint);
      commit_loop(link, writer);
    });
  // Own pending entries first: what this consumer read before a crash.
  source from = source::own_pending;
  while (!stopping()) {
    progress();
    if (from == source::fresh && clock_type::now() >= next_claim_) from = source::claims;
    batch b;
    if (!read(b, from)) {
      // After a Redis failure start again from what this consumer holds, once the
      // batches in flight are through (not to deliver them to ourselves twice).
      handoff_->wait_idle();
      from = source::own_pending;
      if (!pause(1s)) break;
      continue;
    }
    if (b.empty()) {
      if (from == source::own_pending) {
        from = source::fresh;
      } else if (from == source::claims) {
        if (claim_cursor_ == "0-0") {
          next_claim_ = clock_type::now() + s_.claim_interval;
          swept_ = true;
        }
        from = source::fresh;
      } else {
        if (handoff_->idle()) counters_.lag_seconds = 0;
        // Drained: nothing new, and one sweep for a stopped consumer's entries is done.
        if (s_.until_drained && swept_) break;
      }
      continue;
    }
    // The rows end here, on the thread that made them; the committer gets their text.
    b.prepared = prepared_rows::of(b.rows);
    b.rows = {};
    if (!handoff_->push(std::move(b))) break;  // The committer stopped.
    if (from == source::own_pending) {
      // The next read of own pending entries would return this batch again until it is
      // acknowledged.
      handoff_->wait_idle();
    } else if (from == source::claims && claim_cursor_ == "0-0") {
      next_claim_ = clock_type::now() + s_.claim_interval;
      swept_ = true;
      from = source::fresh;
    }
  }
  // Drained or stopping: the committer finishes what it holds (unless stopping) and ends.
  handoff_->wait_idle();
  handoff_->close();
  for (auto& t : threads) t.join();
  next_progress_ = {};
  progress();
  spdlog::info("sink: stopped");
  return 0;
}

}  // namespace tgw::infra::sink
