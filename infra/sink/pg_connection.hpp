#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct pg_conn;

namespace tgw::infra::sink {

/// What PostgreSQL answered to one statement.
struct pg_result {
  bool ok = false;
  /// The SQLSTATE of a refused statement ("23505" unique violation, "42P01" undefined
  /// table, ...); empty for a statement that never reached the server.
  std::string sqlstate;
  std::string message;
  /// Rows of a query, text format; nullopt for SQL NULL.
  std::vector<std::vector<std::optional<std::string>>> rows;
  /// Rows an INSERT, UPDATE or COPY touched.
  long affected = 0;

  /// True when the connection, not the statement, failed: retry on a new connection.
  [[nodiscard]] bool connection_lost() const noexcept;
};

/// A blocking libpq connection for one thread: the sink's worker, never a scheduler or
/// io thread. Failures never throw; a statement on a broken connection reports it, and
/// the next call connects afresh.
class pg_connection {
 public:
  /// `dsn` is a libpq connection string or URI. Unless it says otherwise, connecting
  /// gives up after 5 s and a server that stops answering mid-statement is dropped
  /// after 15 s (tcp_user_timeout), so an outage is noticed rather than waited out.
  explicit pg_connection(std::string dsn, std::string application_name = "tgw-sink");
  ~pg_connection();
  pg_connection(const pg_connection&) = delete;
  pg_connection& operator=(const pg_connection&) = delete;

  /// Connects unless connected. False with `error` set (libpq's words) when the server is
  /// unreachable, refuses the login or the database does not exist.
  bool ensure_connected(std::string& error);
  [[nodiscard]] bool connected() const noexcept;
  void disconnect() noexcept;

  /// Runs one or more statements without parameters.
  pg_result exec(std::string_view sql);
  /// Runs one statement with text parameters ($1, $2, ...).
  pg_result exec_params(std::string_view sql, const std::vector<std::string>& params);
  /// Runs `copy_sql` (COPY ... FROM STDIN) and streams `data` to it.
  pg_result copy_in(std::string_view copy_sql, std::string_view data);

  /// The server this connection reaches, for logs: "host:port/db" (no password).
  [[nodiscard]] std::string describe() const;

 private:
  pg_result finish(void* result);
  pg_result lost(std::string message);

  std::string dsn_;
  std::string application_name_;
  pg_conn* conn_ = nullptr;
};

}  // namespace tgw::infra::sink
