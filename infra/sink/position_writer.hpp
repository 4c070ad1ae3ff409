#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "infra/sink/last_positions.hpp"
#include "infra/sink/pg_connection.hpp"
#include "infra/sink/positions_schema.hpp"
#include "infra/sink/telemetry_entry.hpp"

namespace tgw::infra::sink {

/// What one batch did in PostgreSQL.
struct write_outcome {
  bool committed = false;
  /// Not committed because the connection failed; the same batch may simply be tried
  /// again. False for a refusal that needs an operator (schema dropped, no permission).
  bool connection_lost = false;
  std::string error;
  long inserted = 0;    ///< New rows in positions.
  long duplicates = 0;  ///< Rows already there: a batch delivered again after a crash.
  long rejected = 0;    ///< Rows in rejected_entries.
};

/// Rows ready for COPY: made on one thread, written on another, which then needs
/// neither the rows nor their strings.
struct prepared_rows {
  std::string copy;                  ///< copy_binary of the rows.
  std::vector<std::int64_t> days;    ///< The days (day_partitions::day_of) of their times.
  std::vector<std::string> devices;  ///< Their IMEIs, each once, sorted.
  std::size_t count = 0;

  [[nodiscard]] static prepared_rows of(const std::vector<position_row>& rows);
};

/// Writes batches of rows into `positions`, adds devices seen for the first time to
/// `position_devices` (what the view `last_positions` lists), and writes entries it
/// cannot read into `rejected_entries`, each batch in one transaction. Writing a batch
/// twice changes nothing the second time: the primary key holds the stream entry id.
///
/// A batch goes in with one COPY, the fastest load PostgreSQL has. COPY stops at a
/// duplicate key, so when a batch was (partly) committed before, it goes again through
/// a temporary table and INSERT ... ON CONFLICT DO NOTHING; that slower path runs only
/// for the batches delivered again after a crash.
class position_writer {
 public:
  /// `stream` names the stream in rejected_entries. `failpoint` ("before-commit",
  /// "after-commit") kills the process at that point of the first batch, for the tests
  /// of crash recovery; empty in production.
  position_writer(pg_connection& pg, std::string stream, std::string failpoint = {});

  write_outcome write(const std::vector<position_row>& rows,
                      const std::vector<rejected_entry>& rejected);
  /// The same with the rows prepared elsewhere.
  write_outcome write(const prepared_rows& rows, const std::vector<rejected_entry>& rejected);

 private:
  bool ensure_partitions(const std::vector<std::int64_t>& days, std::string& error);
  write_outcome fail(const pg_result& r, const char* what);
  bool insert_rejected(const std::vector<rejected_entry>& rejected, pg_result& failed);
  bool copy_idempotent(const std::string& data, long& inserted, pg_result& failed);
  void failpoint(const char* point);

  pg_connection& pg_;
  std::string stream_;
  std::string failpoint_;
  day_partitions partitions_;
  /// Devices committed into position_devices by this writer (or found there): a batch
  /// of known devices costs no statement.
  std::unordered_set<std::string> known_devices_;
  bool staging_ready_ = false;
};

}  // namespace tgw::infra::sink
