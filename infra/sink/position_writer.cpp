#include "infra/sink/position_writer.hpp"

#include <signal.h>

#include <algorithm>

#include <utility>

#include "infra/sink/copy_binary.hpp"

namespace tgw::infra::sink {
position_writer::position_writer(pg_connection& pg, std::string stream, std::string failpoint)
    : pg_(pg), stream_(std::move(stream)), failpoint_(std::move(failpoint)) {}

void position_writer::failpoint(const char* point) {
  if (failpoint_ == point) ::raise(SIGKILL);
}

write_outcome position_writer::fail(const pg_result& r, const char* what) {
  write_outcome out;
  out.connection_lost = r.connection_lost();
  out.error = std::string(what) + ": " + r.message;
  if (pg_.connected()) (void)pg_.exec("ROLLBACK");
  if (r.sqlstate == "23514") partitions_.forget();  // A row found no partition.
  if (!pg_.connected()) staging_ready_ = false;
  // A missing partition or a lost connection is fixed by trying again.
  if (r.sqlstate == "23514") out.connection_lost = true;
  return out;
}

bool position_writer::ensure_partitions(const std::vector<std::int64_t>& days, std::string& error) {
  for (const std::int64_t day : days)
    if (!partitions_.ensure(pg_, day, error)) return false;
  return true;
}

prepared_rows prepared_rows::of(const std::vector<position_row>& rows) {
  prepared_rows out;
  out.copy = copy_binary(rows);
  out.devices = devices_of(rows);
  out.count = rows.size();
  for (const auto& r : rows) {
    const std::int64_t day = day_partitions::day_of(r.ts_ms);
    if (out.days.empty() || out.days.back() != day) out.days.push_back(day);
  }
  std::sort(out.days.begin(), out.days.end());
  out.days.erase(std::unique(out.days.begin(), out.days.end()), out.days.end());
  return out;
}

bool position_writer::insert_rejected(const std::vector<rejected_entry>& rejected,
                                      pg_result& failed) {
  for (const auto& e : rejected) {
    auto r = pg_.exec_params(
        "INSERT INTO rejected_entries (stream, stream_id, fields, reason) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT DO NOTHING",
        {stream_, e.stream_id, e.fields, e.reason});
    if (!r.ok) {
      failed = std::move(r);
      return false;
    }
  }
  return true;
}

bool position_writer::copy_idempotent(const std::string& data, long& inserted, pg_result& failed) {
  if (!staging_ready_) {
    // ON COMMIT DELETE ROWS: the table is empty at the start of every transaction.
    auto r = pg_.exec(
        "CREATE TEMP TABLE IF NOT EXISTS positions_incoming (LIKE positions) ON COMMIT DELETE "
        "ROWS");
    if (!r.ok) {
      failed = std::move(r);
      return false;
    }
    staging_ready_ = true;
  }
  auto r = pg_.copy_in(std::string("COPY positions_incoming (") + position_columns() +
                           ") FROM STDIN WITH (FORMAT binary)",
                       data);
  if (!r.ok) {
    failed = std::move(r);
    return false;
  }
  r = pg_.exec(std::string("INSERT INTO positions (") + position_columns() + ") SELECT " +
               position_columns() + " FROM positions_incoming ON CONFLICT DO NOTHING");
  if (!r.ok) {
    failed = std::move(r);
    return false;
  }
  inserted = r.affected;
  return true;
}

write_outcome position_writer::write(const std::vector<position_row>& rows,
                                     const std::vector<rejected_entry>& rejected) {
  return write(prepared_rows::of(rows), rejected);
}

write_outcome position_writer::write(const prepared_rows& rows,
                                     const std::vector<rejected_entry>& rejected) {
  const std::string& data = rows.copy;
  std::string error;
  if (!ensure_partitions(rows.days, error)) {
    write_outcome out;
    out.error = error;
    out.connection_lost = !pg_.connected();
    return out;
  }
  auto r = pg_.exec("BEGIN");
  if (!r.ok) return fail(r, "BEGIN");
  long inserted = static_cast<long>(rows.count);
  if (rows.count > 0) {
    r = pg_.copy_in(
        std::string("COPY positions (") + position_columns() + ") FROM STDIN WITH (FORMAT binary)",
        data);
    if (!r.ok && r.sqlstate == "23505") {
      // Some of these rows are in already: this batch was committed once and delivered
      // again. Start over on the path that skips them.
      (void)pg_.exec("ROLLBACK");
      r = pg_.exec("BEGIN");
      if (!r.ok) return fail(r, "BEGIN");
      pg_result failed;
      if (!copy_idempotent(data, inserted, failed)) return fail(failed, "INSERT positions");
    } else if (!r.ok) {
      return fail(r, "COPY positions");
    }
  }
  // A device's first rows and its place in position_devices commit together, so that
  // last_positions lists every device positions holds.
  std::vector<std::string> new_devices;
  for (const std::string& imei : rows.devices)
    if (!known_devices_.contains(imei)) new_devices.push_back(imei);
  if (!new_devices.empty()) {
    r = pg_.exec_params(add_position_devices_sql(), {imei_array(new_devices)});
    if (!r.ok) return fail(r, "INSERT position_devices");
  }
  pg_result failed;
  if (!insert_rejected(rejected, failed)) return fail(failed, "INSERT rejected_entries");
  failpoint("before-commit");
  r = pg_.exec("COMMIT");
  if (!r.ok) return fail(r, "COMMIT");
  known_devices_.insert(new_devices.begin(), new_devices.end());
  failpoint("after-commit");
  write_outcome out;
  out.committed = true;
  out.inserted = inserted;
  out.duplicates = static_cast<long>(rows.count) - inserted;
  out.rejected = static_cast<long>(rejected.size());
  return out;
}

}  // namespace tgw::infra::sink
