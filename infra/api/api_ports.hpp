#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "infra/api/api_input.hpp"
#include "infra/api/event_cursor.hpp"
#include "infra/commands/command_publisher.hpp"
#include "infra/http/body_stream.hpp"

namespace tgw::infra::api {

/// Waits for command outcomes (POST ...?wait=N), as the routes see them:
/// outcome_watcher, or a stand-in.
class command_waits {
 public:
  using clock = std::chrono::steady_clock;
  /// The response, or nothing when the deadline passed first. Called once.
  using on_outcome = std::function<void(std::optional<commands::command_response>)>;
  virtual ~command_waits() = default;
  /// Waits for `command_id` until `deadline`; false (nothing registered) when no more
  /// waits are taken now.
  virtual bool expect(const std::string& command_id, clock::time_point deadline,
                      on_outcome done) = 0;
  /// Makes the wait registered as `from` await command `to` instead (an Idempotency-Key
  /// found an earlier command; several waits may await one command); it keeps the name
  /// `from`. False when it has ended meanwhile.
  virtual bool rekey(const std::string& from, const std::string& to) = 0;
  /// Ends the wait registered as `command_id` without calling it; false when it has ended
  /// already.
  virtual bool cancel(const std::string& command_id) = 0;
  /// Whether outcomes are followed now (a wait begun otherwise could miss its own).
  [[nodiscard]] virtual bool following() const = 0;
  [[nodiscard]] virtual std::size_t waiting() const = 0;
  [[nodiscard]] virtual std::uint64_t outcomes_delivered() const = 0;
};

/// The live event streams (GET /v1/events), as the routes see them: event_hub, or a
/// stand-in.
class event_streams {
 public:
  virtual ~event_streams() = default;
  /// Positions per event id, once the sources are known (0 before).
  [[nodiscard]] virtual std::size_t sources() const = 0;
  /// Whether the reader knows the streams now (false while Redis is unreachable).
  [[nodiscard]] virtual bool reading() const = 0;
  /// Whether a client would be taken now; a 503 in `error` when not.
  [[nodiscard]] virtual bool admits(api_error& error) const = 0;
  /// Calls `then(true)` once the sources are known (at once when they are), or
  /// `then(false)` when they are not within `within` (Redis unreachable) or too many
  /// wait already; from the caller's thread or the reader's, never with a lock held.
  virtual void when_ready(std::chrono::milliseconds within, std::function<void(bool)> then) = 0;
  /// Follows `filter` into `out` from `from` (or from now); false with `error`.
  virtual bool subscribe(std::shared_ptr<http::body_stream> out, event_filter filter,
                         std::optional<event_cursor> from, api_error& error) = 0;
  [[nodiscard]] virtual std::size_t clients() const = 0;
  [[nodiscard]] virtual std::uint64_t events_sent() const = 0;
  [[nodiscard]] virtual std::uint64_t clients_cut() const = 0;
};

}  // namespace tgw::infra::api
