#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "infra/commands/command_history.hpp"
#include "infra/telemetry/device_listing.hpp"

namespace tgw::infra::api {

/// One page of GET /v1/devices.
struct device_query {
  std::size_t limit = 100;
  /// Where the previous page ended (its next_cursor): the last IMEI it looked at.
  std::string after;
  std::optional<bool> online;                 ///< Only devices online now (or offline).
  std::optional<std::int64_t> silent_for_ms;  ///< Only devices silent at least this long.
  /// Devices neither online nor seen within this long are left out.
  std::int64_t seen_within_ms = std::int64_t{7} * 24 * 3600 * 1000;
};

struct device_page {
  std::vector<telemetry::listed_device> devices;
  /// Where the next page starts; empty when no device is left to look at. A page may
  /// hold fewer than `limit` devices (the filters left some out) and still have one.
  std::string next_cursor;
  std::int64_t at_ms = 0;  ///< Redis server time the filters were applied at.
};

struct device_detail {
  telemetry::listed_device device;
  std::vector<commands::command_record> open_commands;
  std::int64_t at_ms = 0;
};

/// GET /v1/devices/{imei}/records: entries of the device's telemetry stream stored
/// between from_ms and to_ms (storing time, the stream ids), oldest first.
struct record_query {
  std::string imei;
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;  ///< 0: up to now.
  std::size_t limit = 100;
  std::string after;  ///< The previous page's next_cursor: a stream id.
  bool names = false;
};

struct record_page {
  std::vector<nlohmann::ordered_json> records;
  std::string next_cursor;  ///< Empty when the range is read to its end.
};

/// A command to publish (POST /v1/devices/{imei}/commands).
struct command_submission {
  std::string imei;
  std::string text;
  int codec = 12;
  std::chrono::seconds ttl{300};
  bool queue_if_offline = false;
  std::string publisher;   ///< The token's name.
  std::string command_id;  ///< Chosen by the caller (new_command_id()).
  /// With an Idempotency-Key: the key, the request's fingerprint and how long the key
  /// is kept. Empty key: none.
  std::string idempotency_key;
  std::string fingerprint;
  std::chrono::seconds idempotency_ttl{86400};
};

struct command_submitted {
  std::string command_id;  ///< The command's id: a repeated key's is the first request's.
  /// sent, queued, offline; unknown_device (nothing published: the device never
  /// identified, and the command asks not to be queued).
  std::string status;
  bool repeated = false;  ///< An earlier request with the same key published it.
  /// The key was used before with another request (another body): nothing published.
  bool conflict = false;
  std::string owner;
};

/// A command as the API shows it.
struct command_view {
  std::string imei;
  commands::command_record record;
};

/// What the API asks of Redis, in typed calls: one instance per worker thread, each
/// with its own connection. Every call blocks; nullopt (or false) with `error` on a
/// Redis failure, which the API answers 503.
class api_store {
 public:
  virtual ~api_store() = default;
  [[nodiscard]] virtual std::optional<device_page> devices(const device_query& q,
                                                           std::string& error) = 0;
  /// The device; nullopt inside when nothing is known of it.
  [[nodiscard]] virtual std::optional<std::optional<device_detail>> device(const std::string& imei,
                                                                           std::string& error) = 0;
  [[nodiscard]] virtual std::optional<record_page> records(const record_query& q,
                                                           std::string& error) = 0;
  [[nodiscard]] virtual std::optional<command_submitted> submit(const command_submission& c,
                                                                std::string& error) = 0;
  /// A command published through the API, by id; nullopt inside when unknown.
  [[nodiscard]] virtual std::optional<std::optional<command_view>> command(
      const std::string& command_id, std::string& error) = 0;
  [[nodiscard]] virtual std::optional<std::vector<commands::command_record>> history(
      const std::string& imei, std::int64_t since_ms, std::string& error) = 0;
  /// Whether Redis answers now.
  [[nodiscard]] virtual bool reachable(std::string& error) = 0;
};

}  // namespace tgw::infra::api
