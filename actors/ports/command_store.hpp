#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "actors/ports/store_failure.hpp"

namespace tgw::ports {

/// One entry of an instance's outbound stream, validated.
struct command_entry {
  std::string entry_id;
  std::string command_id;
  std::string target_imei;
  std::string payload;
  int codec = 0;
  /// Unix seconds after which the command must not be delivered; 0 (or the field
  /// missing) means it never expires.
  std::int64_t expires_at = 0;
  /// Non-empty when the entry is unusable: why, naming the field ("missing field
  /// target_imei", "bad codec 13", "payload over 512 bytes"). entry_id is always set,
  /// so the entry can still be answered and acknowledged.
  std::string malformed;
  /// Malformed because the payload holds a control character.
  bool control_characters = false;
  /// The key shard whose outbound stream the entry was read from (0 on a single node).
  std::uint32_t shard = 0;
};

/// A command's terminal (or delivery) outcome, as published in commands:responses.
struct resolution {
  std::string status;    ///< responded, failed or delivered
  std::string response;  ///< The device's reply, its bytes as they came.
  std::string failure_reason;
};

/// How journaling a command's command_dispatched event went.
enum class dispatch_status : std::uint8_t {
  journaled,         ///< The event is in its device's journal: deliver the command.
  answered_already,  ///< The command has its response already: do not deliver it.
  not_journaled,     ///< The store failed (dispatch_outcome::failure says how).
};

/// The outcome of one command_dispatched event.
struct dispatch_outcome {
  dispatch_status status = dispatch_status::journaled;
  store_failure failure;  ///< Set with not_journaled.
};

/// The consumer side of an instance's command stream as the command reader, responder
/// and janitor see it: reads (pending first, then new), and the atomic steps that
/// answer, journal, drain and adopt commands. Implemented by the commands adapter
/// (infra/commands); tests of the actors' logic stand in an in-memory one
/// (tests/support/fake_command_store.hpp). Every call blocks, so it
/// belongs to one thread (a detached actor's).
class command_store {
 public:
  /// What adopting a dead instance's stream did.
  struct orphan_counts {
    std::size_t handled = 0;
    std::size_t rerouted = 0;
    std::size_t failed = 0;
  };

  virtual ~command_store() = default;

  /// Makes the stream ready to read: the `tgw_commands` library loaded, this
  /// instance's outbound stream and consumer group created (an existing one is fine),
  /// and the instance remembered among those with a stream.
  virtual bool prepare(store_failure& failure) = 0;
  /// This consumer's own pending entries (delivered, never acknowledged), oldest
  /// first. Call it at start and after every failure.
  virtual std::optional<std::vector<command_entry>> read_pending(store_failure& failure) = 0;
  /// Up to `count` entries never delivered to this group, waiting up to `block`. An
  /// empty vector when none arrived or when the group was gone (it is re-created).
  virtual std::optional<std::vector<command_entry>> read_new(std::chrono::milliseconds block,
                                                             std::size_t count,
                                                             store_failure& failure) = 0;
  /// Publishes the response, journals command_resolved, acknowledges and deletes the
  /// entry in one step. Resolving an entry twice publishes once. False only when the
  /// store fails.
  virtual bool resolve(const command_entry& entry, const resolution& outcome,
                       store_failure& failure, std::int64_t journal_maxlen = 10000) = 0;
  /// resolve() for each outcome, in one round trip: one failure per outcome, of kind
  /// none for success. A failed one may still have been published (a store that could not
  /// confirm it): retrying it is safe, as an entry is answered once.
  virtual std::vector<store_failure> resolve_all(
      std::span<const std::pair<command_entry, resolution>> outcomes,
      std::int64_t journal_maxlen) = 0;
  /// Journals command_dispatched for each entry's device, in one round trip; nothing
  /// is journaled for a command answered already (a copy re-routed after its original
  /// was answered), which must not be delivered.
  virtual std::vector<dispatch_outcome> dispatched_all(
      std::span<const command_entry* const> entries, std::int64_t journal_maxlen) = 0;
  /// Moves the device's offline queue into this instance's stream; the number moved.
  /// Expired and malformed queued commands are answered failed instead.
  virtual std::optional<std::size_t> drain_offline(const std::string& imei,
                                                   store_failure& failure) = 0;
  /// Gives every entry of a dead instance's stream one outcome (re-routed to the
  /// device's live owner, or failed) and removes the stream.
  virtual std::optional<orphan_counts> adopt_orphans(const std::string& dead_instance,
                                                     store_failure& failure) = 0;
  /// Instances that once created a command stream and whose heartbeat has expired:
  /// the janitor adopts their streams. An instance leaves the set when its stream is
  /// adopted to the end.
  virtual std::optional<std::vector<std::string>> orphan_candidates(store_failure& failure) = 0;

  [[nodiscard]] virtual const std::string& instance_id() const = 0;
};

/// Validates one stream entry's fields (name, value, name, value, ...). A nil body
/// (the entry was deleted while pending) is malformed too, and so is a payload with a
/// control character unless `allow_control_characters` (codecs::find_control_character).
[[nodiscard]] command_entry parse_command_entry(std::string entry_id,
                                                const std::vector<std::string>& fields,
                                                bool body_present, std::size_t max_payload,
                                                bool allow_control_characters = false);

}  // namespace tgw::ports
