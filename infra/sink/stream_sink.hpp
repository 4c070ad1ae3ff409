#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "infra/redis/connection.hpp"
#include "infra/sink/pg_connection.hpp"
#include "infra/sink/sink_counters.hpp"
#include "infra/telemetry/io_dictionary.hpp"

namespace tgw::infra::sink {

class position_writer;

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
  bool until_drained = false;  ///< Stop once a read finds nothing new.
  std::string failpoint;       ///< Tests only: see position_writer.
};

/// Moves records from a telemetry stream into PostgreSQL through a Redis consumer group,
/// on the calling thread, until termination is requested (or, with until_drained, the
/// stream has nothing new).
///
/// Every entry is acknowledged (XACK) only after the transaction that wrote it
/// committed. In between it stays pending in the group: after a crash this consumer
/// reads its own pending entries first when it starts, and any other consumer of the
/// group takes over entries pending longer than claim_idle (XAUTOCLAIM). Committing a
/// batch again is a no-op (position_writer), so delivery at least once is stored once.
///
/// PostgreSQL or Redis away: the batch in hand is retried, with backoff up to 10 s, and
/// nothing more is read; nothing is acknowledged until it is committed.
class stream_sink {
 public:
  stream_sink(sink_settings settings, redis::connection& redis, pg_connection& pg,
              telemetry::io_dictionary names, sink_counters& counters);

  /// Runs until done. 0: stopped on request or drained.
  int run();

 private:
  struct batch;
  enum class source { own_pending, claims, fresh };

  bool ensure_group();
  bool read(batch& b, source from);
  bool store(const batch& b);
  bool acknowledge(const batch& b);
  void progress();
  bool pause(std::chrono::milliseconds how_long);

  sink_settings s_;
  redis::connection& redis_;
  pg_connection& pg_;
  telemetry::io_dictionary names_;
  sink_counters& counters_;
  std::string claim_cursor_ = "0-0";
  bool swept_ = false;  ///< A claim sweep has gone through the whole pending list.
  std::chrono::steady_clock::time_point next_claim_;
  std::chrono::steady_clock::time_point next_progress_;
  std::uint64_t records_at_progress_ = 0;
  std::chrono::steady_clock::time_point last_progress_;
  position_writer* writer_ = nullptr;  ///< Set while run() runs.
};

}  // namespace tgw::infra::sink
