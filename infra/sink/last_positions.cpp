#include "infra/sink/last_positions.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>

#include "infra/sink/copy_binary.hpp"

namespace tgw::infra::sink {
namespace {

std::vector<std::string> columns() {
  std::vector<std::string> out;
  std::istringstream in(position_columns());
  for (std::string c; std::getline(in, c, ',');) {
    c.erase(0, c.find_first_not_of(' '));
    out.push_back(c);
  }
  return out;
}

std::string joined(const std::vector<std::string>& names, const std::string& prefix) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + prefix + n;
  return out;
}

// What both the backfill and the per-batch upsert end with: a device's row is replaced
// only by a newer one, so batches committed out of order, or delivered twice, leave
// the newest.
std::string on_conflict() {
  std::vector<std::string> rest;
  for (const std::string& c : columns())
    if (c != "imei") rest.push_back(c);
  return " ON CONFLICT (imei) DO UPDATE SET (" + joined(rest, "") + ") = (" +
         joined(rest, "EXCLUDED.") +
         ") WHERE (EXCLUDED.ts, EXCLUDED.stream_id) > (last_positions.ts, "
         "last_positions.stream_id)";
}

// A PostgreSQL array literal of `values`, each quoted.
std::string array_literal(const std::vector<std::string>& values) {
  std::string out = "{";
  for (const std::string& v : values) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (const char c : v) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace

const char* last_positions_schema_sql() {
  return "CREATE TABLE IF NOT EXISTS last_positions (LIKE positions, PRIMARY KEY (imei))";
}

const std::string& last_positions_backfill_sql() {
  static const std::string sql = "INSERT INTO last_positions (" + joined(columns(), "") +
                                 ") SELECT DISTINCT ON (imei) " + joined(columns(), "") +
                                 " FROM positions ORDER BY imei, ts DESC, stream_id DESC" +
                                 on_conflict();
  return sql;
}

const std::string& last_positions_upsert_sql() {
  static const std::string sql =
      "INSERT INTO last_positions (" + joined(columns(), "") + ") SELECT DISTINCT ON (p.imei) " +
      joined(columns(), "p.") +
      " FROM unnest($1::text[], $2::bigint[], $3::text[]) AS k(imei, ms, stream_id) JOIN "
      "positions p ON p.imei = k.imei AND p.ts = 'epoch'::timestamptz + k.ms * interval '1 "
      "millisecond' AND p.stream_id = k.stream_id ORDER BY p.imei, p.ts DESC, p.stream_id DESC" +
      on_conflict();
  return sql;
}

newest_rows newest_rows::of(const std::vector<position_row>& rows) {
  // Every row at its device's newest time: two of one time are told apart by stream_id
  // in SQL, by PostgreSQL's collation, as the query over positions orders them.
  std::map<std::string, std::int64_t> newest;  // sorted by IMEI: the order rows are locked
  for (const position_row& r : rows) {
    auto [it, added] = newest.try_emplace(r.imei, r.ts_ms);
    if (!added) it->second = std::max(it->second, r.ts_ms);
  }
  std::vector<const position_row*> chosen;
  for (const position_row& r : rows)
    if (newest.at(r.imei) == r.ts_ms) chosen.push_back(&r);
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const position_row* a, const position_row* b) { return a->imei < b->imei; });
  std::vector<std::string> imeis, times, ids;
  for (const position_row* r : chosen) {
    imeis.push_back(r->imei);
    times.push_back(std::to_string(r->ts_ms));
    ids.push_back(r->stream_id);
  }
  return {array_literal(imeis), array_literal(times), array_literal(ids), chosen.size()};
}

}  // namespace tgw::infra::sink
