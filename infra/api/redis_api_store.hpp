#pragma once

#include <memory>
#include <optional>
#include <string>

#include "infra/api/api_store.hpp"
#include "infra/commands/command_publisher.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"
#include "infra/telemetry/io_dictionary.hpp"

namespace tgw::infra::api {

/// The API's reads and commands on Redis (single node, Sentinel or cluster), for one
/// worker thread: a connection for the reads, a command_publisher (its own connection)
/// for the commands. On a cluster the key shards are read from Redis when first needed,
/// and again on every call until a gateway has stored them.
class redis_api_store final : public api_store {
 public:
  /// `names`, when given, names the IO elements of records asked for with names=true;
  /// it must outlive the store.
  redis_api_store(redis::connection::options where, const telemetry::io_dictionary* names);

  [[nodiscard]] std::optional<device_page> devices(const device_query& q,
                                                   std::string& error) override;
  [[nodiscard]] std::optional<std::optional<device_detail>> device(const std::string& imei,
                                                                   std::string& error) override;
  [[nodiscard]] std::optional<record_page> records(const record_query& q,
                                                   std::string& error) override;
  [[nodiscard]] std::optional<command_submitted> submit(const command_submission& c,
                                                        std::string& error) override;
  [[nodiscard]] std::optional<std::optional<command_view>> command(const std::string& command_id,
                                                                   std::string& error) override;
  [[nodiscard]] std::optional<std::vector<commands::command_record>> history(
      const std::string& imei, std::int64_t since_ms, std::string& error) override;
  [[nodiscard]] bool reachable(std::string& error) override;

  /// Entries of the telemetry stream a records request reads at most, whatever it
  /// finds: the stream holds every device's records, so one device's page costs the
  /// range it spans, and this bounds it.
  static constexpr std::size_t max_entries_scanned = 20'000;
  /// Devices of the index a devices page looks at, at most, whatever its filters keep.
  static constexpr std::size_t max_devices_scanned = 5'000;

 private:
  /// The key shards, once known; nullopt with `none` true on a cluster no gateway has
  /// written to (nothing to read), or with `error` on a Redis failure.
  std::optional<redis::key_shards> shards(std::string& error, bool& none);

  redis::connection::options where_;
  redis::connection conn_;
  std::optional<redis::key_shards> shards_;
  std::unique_ptr<commands::command_publisher> publisher_;
  const telemetry::io_dictionary* names_;
};

}  // namespace tgw::infra::api
