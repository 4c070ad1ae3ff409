#pragma once

#include <cstdint>
#include <string>

namespace tgw::test {

/// A throw-away PostgreSQL 15 server: initdb into a temporary directory, postgres on a
/// free loopback port, a database `tgw`; stopped in the destructor. Run as root, the
/// server runs as the `postgres` user (it refuses root). stop() and start() again are an
/// outage on the same port with the data kept, as a restart of the server.
class postgres_server {
 public:
  postgres_server();
  ~postgres_server();
  postgres_server(const postgres_server&) = delete;
  postgres_server& operator=(const postgres_server&) = delete;

  void start();
  /// An immediate shutdown (SIGQUIT), as a crash: the next start recovers from the WAL.
  void stop();
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// The libpq connection string for the database `tgw`.
  [[nodiscard]] std::string dsn() const;
  /// Runs SQL with psql and returns its unaligned, tuples-only output (throws on error).
  [[nodiscard]] std::string query(const std::string& sql) const;

  /// The directory of PostgreSQL 15's server programs (initdb, postgres), or empty when
  /// it is not installed.
  static std::string bin_dir();

 private:
  std::uint16_t port_ = 0;
  int pid_ = -1;
  std::string dir_;
};

}  // namespace tgw::test
