#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/sink/pg_connection.hpp"
#include "infra/sink/sink_counters.hpp"
#include "infra/sink/telemetry_entry.hpp"
#include "infra/telemetry/io_dictionary.hpp"
#include "infra/telemetry/named_io.hpp"

namespace tgw::infra::sink {

class position_writer;

/// What one committer thread writes with: its PostgreSQL connection and the Redis
/// connection it acknowledges on (a connection belongs to one thread).
struct committer_link {
  std::unique_ptr<pg_connection> pg;
  std::unique_ptr<redis::connection> acker;
};

struct sink_settings {
  std::string stream = "telemetry:records";
  std::string group = "positions";
  std::string consumer;           ///< Unique per process: host and pid by default.
  std::string group_start = "0";  ///< Where a new group starts: 0 (everything) or $.
  std::size_t batch = 1000;
  std::chrono::milliseconds block{1000};
  /// An entry another consumer has held unacknowledged this long is taken over.
  std::chrono::milliseconds claim_idle{60000};
  std::chrono::milliseconds claim_interval{5000};
  std::chrono::milliseconds progress_interval{10000};
  bool until_drained = false;  ///< Stop once a read (not waiting) finds nothing new.
  /// Records outside it go to rejected_entries, never to a day partition of their own.
  record_window window;
  std::string failpoint;  ///< Tests only: see position_writer.
};

/// Moves records from a telemetry stream into PostgreSQL through a Redis consumer group
/// until termination is requested (or, with until_drained, the stream has nothing new).
///
/// Several threads, so that PostgreSQL's work on one batch overlaps the sink's on the
/// next and one batch's COMMIT (its WAL flush) overlaps another's COPY: the calling
/// thread reads entries (XREADGROUP, XAUTOCLAIM on `reader`) and turns them into rows
/// and COPY data; each committer (one a committer_link) writes a batch in one
/// transaction and then acknowledges it (XACK). At most one batch waits for a committer.
///
/// Every entry is acknowledged only after the transaction that wrote it committed. In
/// between it stays pending in the group: after a crash this consumer reads its own
/// pending entries first when it starts, and any other consumer of the group takes
/// over entries pending longer than claim_idle (XAUTOCLAIM). Committing a batch again
/// is a no-op (position_writer), so delivery at least once is stored once.
///
/// PostgreSQL away: the batch in hand is retried, with backoff up to 10 s, and reading
/// stops once the next batch waits. Redis away: reads and the XACK of a committed batch
/// are retried the same way.
class stream_sink {
 public:
  /// `committers` holds at least one link.
  stream_sink(sink_settings settings, redis::connection& reader,
              std::vector<committer_link> committers, telemetry::io_dictionary names,
              sink_counters& counters);
  ~stream_sink();
  stream_sink(const stream_sink&) = delete;
  stream_sink& operator=(const stream_sink&) = delete;

  /// Runs until done. 0: stopped on request or drained.
  int run();

 private:
  struct batch;
  class handoff;
  enum class source { own_pending, claims, fresh };

  bool ensure_group();
  bool read(batch& b, source from);
  void commit_loop(committer_link& link, position_writer& writer);
  bool store(committer_link& link, position_writer& writer, const batch& b);
  bool acknowledge(redis::connection& acker, const batch& b);
  void progress();
  bool pause(std::chrono::milliseconds how_long);
  /// Pauses for `wait`, then doubles it up to the limit; false when stopping.
  bool back_off(std::chrono::milliseconds& wait);
  bool stopping();

  /// Says once per device that its records are outside the window, and once per
  /// element and size that a wire size is not the dictionary's: a device with a wrong
  /// clock sends hundreds a second, each rejected and counted.
  void warn_once(const std::string& imei, const std::string& why);
  void warn_once(const std::vector<telemetry::io_size_mismatch>& mismatches);

  sink_settings s_;
  redis::connection& redis_;
  std::vector<committer_link> committers_;
  telemetry::io_dictionary names_;
  sink_counters& counters_;
  std::unique_ptr<handoff> handoff_;
  std::atomic<bool> stop_{false};
  std::string claim_cursor_ = "0-0";
  bool swept_ = false;  ///< A claim sweep has gone through the whole pending list.
  std::chrono::steady_clock::time_point next_claim_;
  std::chrono::steady_clock::time_point next_progress_;
  std::chrono::steady_clock::time_point last_progress_;
  std::uint64_t records_at_progress_ = 0;
  std::unordered_set<std::string> clock_warned_;
  std::set<std::tuple<std::uint16_t, std::uint8_t, std::uint16_t>> size_warned_;
};

}  // namespace tgw::infra::sink
