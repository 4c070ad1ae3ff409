#include "infra/sink/pg_connection.hpp"

#include <libpq-fe.h>

#include <array>
#include <cstdlib>
#include <utility>

namespace tgw::infra::sink {
namespace {

// The connection failed rather than the statement: class 08 (connection exception),
// 57P01-57P03 (the server shut down or is starting), or no SQLSTATE at all.
bool connection_class(const std::string& sqlstate) {
  return sqlstate.empty() || sqlstate.starts_with("08") || sqlstate == "57P01" ||
         sqlstate == "57P02" || sqlstate == "57P03";
}

std::string trimmed(const char* text) {
  std::string s = text == nullptr ? "" : text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

bool pg_result::connection_lost() const noexcept {
  return !ok && connection_class(sqlstate);
}

pg_connection::pg_connection(std::string dsn, std::string application_name)
    : dsn_(std::move(dsn)), application_name_(std::move(application_name)) {}

pg_connection::~pg_connection() {
  disconnect();
}

bool pg_connection::connected() const noexcept {
  return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK;
}

void pg_connection::disconnect() noexcept {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

bool pg_connection::ensure_connected(std::string& error) {
  if (connected()) return true;
  disconnect();
  // Defaults first: with expand_dbname the DSN (the last "dbname") overrides any of them.
  const std::array<const char*, 6> keys{
      "connect_timeout", "tcp_user_timeout", "fallback_application_name",
      "keepalives_idle", "dbname",           nullptr};
  const std::array<const char*, 6> values{"5",  "15000",      application_name_.c_str(),
                                          "30", dsn_.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys.data(), values.data(), 1);
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) {
    // libpq prints server notices to stderr by default; "relation already exists,
    // skipping" from every CREATE ... IF NOT EXISTS is not news.
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    return true;
  }
  error = conn_ == nullptr ? "out of memory" : trimmed(PQerrorMessage(conn_));
  if (error.empty()) error = "connection failed";
  disconnect();
  return false;
}

pg_result pg_connection::lost(std::string message) {
  disconnect();
  pg_result r;
  r.message = std::move(message);
  return r;
}

pg_result pg_connection::finish(void* raw) {
  PGresult* result = static_cast<PGresult*>(raw);
  pg_result r;
  if (result == nullptr) return lost(conn_ ? trimmed(PQerrorMessage(conn_)) : "not connected");
  const ExecStatusType status = PQresultStatus(result);
  r.ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
  if (!r.ok) {
    const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    r.sqlstate = state == nullptr ? "" : state;
    r.message = trimmed(PQresultErrorMessage(result));
  }
  if (status == PGRES_TUPLES_OK) {
    const int rows = PQntuples(result);
    const int cols = PQnfields(result);
    r.rows.reserve(static_cast<std::size_t>(rows));
    for (int i = 0; i < rows; ++i) {
      auto& row = r.rows.emplace_back();
      for (int c = 0; c < cols; ++c) {
        if (PQgetisnull(result, i, c))
          row.emplace_back(std::nullopt);
        else
          row.emplace_back(std::string(PQgetvalue(result, i, c),
                                       static_cast<std::size_t>(PQgetlength(result, i, c))));
      }
    }
  }
  const char* tuples = PQcmdTuples(result);
  if (tuples != nullptr && *tuples != '\0') r.affected = std::strtol(tuples, nullptr, 10);
  PQclear(result);
  if (!r.ok && conn_ != nullptr && PQstatus(conn_) != CONNECTION_OK) disconnect();
  return r;
}

pg_result pg_connection::exec(std::string_view sql) {
  std::string error;
  if (!ensure_connected(error)) return lost(error);
  const std::string text(sql);
  PGresult* result = PQexec(conn_, text.c_str());
  // PQexec returns the last result of a multi-statement string; earlier ones are freed.
  return finish(result);
}

pg_result pg_connection::exec_params(std::string_view sql, const std::vector<std::string>& params) {
  std::string error;
  if (!ensure_connected(error)) return lost(error);
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p.c_str());
  const std::string text(sql);
  return finish(PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                             values.data(), nullptr, nullptr, 0));
}

pg_result pg_connection::copy_in(std::string_view copy_sql, std::string_view data) {
  std::string error;
  if (!ensure_connected(error)) return lost(error);
  const std::string text(copy_sql);
  PGresult* start = PQexec(conn_, text.c_str());
  if (start == nullptr || PQresultStatus(start) != PGRES_COPY_IN) return finish(start);
  PQclear(start);
  // libpq buffers and sends as the buffer fills; 1 MiB pieces keep each call bounded.
  constexpr std::size_t piece = 1 << 20;
  for (std::size_t at = 0; at < data.size(); at += piece) {
    const std::size_t n = std::min(piece, data.size() - at);
    if (PQputCopyData(conn_, data.data() + at, static_cast<int>(n)) != 1)
      return lost(trimmed(PQerrorMessage(conn_)));
  }
  if (PQputCopyEnd(conn_, nullptr) != 1) return lost(trimmed(PQerrorMessage(conn_)));
  pg_result r = finish(PQgetResult(conn_));
  // Drain: a COPY ends with one result, then a null.
  while (conn_ != nullptr) {
    PGresult* extra = PQgetResult(conn_);
    if (extra == nullptr) break;
    PQclear(extra);
  }
  return r;
}

std::string pg_connection::describe() const {
  if (conn_ == nullptr) return "(not connected)";
  const char* host = PQhost(conn_);
  const char* port = PQport(conn_);
  const char* db = PQdb(conn_);
  return std::string(host ? host : "?") + ":" + (port ? port : "?") + "/" + (db ? db : "?");
}

}  // namespace tgw::infra::sink
