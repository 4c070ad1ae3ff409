#pragma once

#include <atomic>
#include <cstdint>

namespace tgw::infra::sink {

/// What a sink has done, written by its worker and read by the metrics scrape and the
/// progress line. Relaxed atomics: each is a count on its own.
struct sink_counters {
  std::atomic<std::uint64_t> records{0};         ///< Rows committed into positions.
  std::atomic<std::uint64_t> duplicates{0};      ///< Rows found already committed.
  std::atomic<std::uint64_t> rejected{0};        ///< Entries committed into rejected_entries.
  std::atomic<std::uint64_t> unknown_fields{0};  ///< Entries with fields kept in `extra`.
  std::atomic<std::uint64_t> deleted{0};         ///< Pending entries gone from the stream.
  std::atomic<std::uint64_t> batches{0};
  std::atomic<std::uint64_t> claimed{0};  ///< Entries taken over from another consumer.
  std::atomic<std::uint64_t> postgres_failures{0};
  std::atomic<std::uint64_t> redis_failures{0};
  /// Seconds between storing and committing of the newest committed entry; 0 when the
  /// last read found nothing new.
  std::atomic<double> lag_seconds{0};
  std::atomic<double> commit_seconds_sum{0};
  std::atomic<bool> postgres_up{false};
  std::atomic<bool> redis_up{false};
};

}  // namespace tgw::infra::sink
