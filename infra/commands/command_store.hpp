#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/commands/command_keys.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/function_library.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::commands {

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
  /// The key shard whose outbound stream the entry was read from (0 on a single node).
  std::uint32_t shard = 0;
};

/// A command's terminal (or delivery) outcome, as published in commands:responses.
struct resolution {
  std::string status;    ///< responded, failed or delivered
  std::string response;  ///< The device's reply, its bytes as they came.
  std::string failure_reason;
};

/// The consumer side of an instance's command stream over one blocking connection:
/// the group, reads (pending first, then new), and the atomic steps of the
/// `tgw_commands` library. One instance per thread (a detached actor).
///
/// On a Redis Cluster the instance has one outbound stream in each key shard, beside
/// the registry, responses and journals of that shard's devices, so each step stays in
/// one slot. A new-entry read cannot block on streams of several slots: it reads them
/// all without blocking, and when none had anything it blocks on the instance's wake
/// stream (keys::wake), which publishers add to after each command they send here.
///
/// The connection's io_timeout must be longer than any BLOCK time passed to
/// read_new(), otherwise hiredis gives up on the socket while the server still holds
/// the read and an entry can be delivered into the pending list unseen (e.g. 3000 ms
/// io timeout with a 1000 ms BLOCK).
class command_store {
 public:
  command_store(redis::connection::options where, std::string instance_id,
                std::size_t max_payload = 512, redis::key_shards shards = {});

  bool load_library(std::string& error);
  /// XGROUP CREATE commands:outbound:{me} ingest 0 MKSTREAM (in every shard); an
  /// existing group is fine.
  bool ensure_group(std::string& error);
  /// This consumer's own pending entries (delivered, never acknowledged), from id 0,
  /// paged until empty. Call it at start and after every reconnect.
  std::optional<std::vector<command_entry>> read_pending(std::string& error);
  /// Up to `count` entries (on a cluster: per shard) never delivered to this group,
  /// waiting up to `block`. An empty vector when none arrived or when the group was
  /// gone (it is re-created).
  std::optional<std::vector<command_entry>> read_new(std::chrono::milliseconds block,
                                                     std::size_t count, std::string& error);
  /// tgw_cmd_resolve: publishes the response, journals command_resolved, acknowledges
  /// and deletes the entry in one step. Resolving an entry twice publishes once. False
  /// only on a Redis error.
  bool resolve(const command_entry& entry, const resolution& outcome, std::string& error,
               std::int64_t journal_maxlen = 10000);
  /// Journals command_dispatched for the entry's device (its reply is -1, and nothing is
  /// journaled, when the command was answered already: do not deliver it).
  bool dispatched(const command_entry& entry, std::string& error,
                  std::int64_t journal_maxlen = 10000);

  /// The commands resolve() and dispatched() run (empty: nothing to run), for batching.
  [[nodiscard]] std::vector<std::string> resolve_command(const command_entry& entry,
                                                         const resolution& outcome,
                                                         std::int64_t journal_maxlen) const;
  [[nodiscard]] std::vector<std::string> dispatched_command(const command_entry& entry,
                                                            std::int64_t journal_maxlen) const;
  /// Runs `commands` in one pipelined round trip; one error text per command, empty
  /// for success (and for an empty command). With require_replicas(), a batch that
  /// fewer replicas confirmed fails whole: the responder retries it, which is safe
  /// because tgw_cmd_resolve publishes once per entry.
  /// `results`, when given, gets each command's reply (nil where it failed).
  std::vector<std::string> run_batch(const std::vector<std::vector<std::string>>& commands,
                                     std::vector<redis::value>* results = nullptr);
  /// From now on run_batch() ends with `WAIT replicas timeout` (--ack-replicas): a
  /// response is published only once a failover would keep it.
  void require_replicas(int replicas, std::chrono::milliseconds timeout) {
    replicas_ = replicas;
    replicas_timeout_ = timeout;
  }
  /// Moves the device's offline queue into this instance's stream; the number moved.
  std::optional<std::size_t> drain_offline(const std::string& imei, std::string& error);

  struct orphan_counts {
    std::size_t handled = 0;
    std::size_t rerouted = 0;
    std::size_t failed = 0;
  };
  /// Gives every entry of a dead instance's stream one outcome (re-routed or failed)
  /// and removes the stream.
  std::optional<orphan_counts> adopt_orphans(const std::string& dead_instance, std::string& error);
  /// Instances that once created a command stream and whose heartbeat has expired:
  /// the janitor adopts their streams. An instance leaves the set when its stream is
  /// adopted to the end.
  std::optional<std::vector<std::string>> orphan_candidates(std::string& error);

  [[nodiscard]] const std::string& instance_id() const { return instance_; }
  /// This instance's outbound stream in `shard`.
  [[nodiscard]] std::string stream(std::uint32_t shard = 0) const {
    return keys::outbound(instance_, shards_.prefix(shard));
  }

 private:
  redis::value call(const std::vector<std::string>& argv);
  /// Parses an XREADGROUP reply of one stream; appends to `out`, advances `last_id`.
  /// False with `error` on a Redis error; a missing group is re-created.
  bool parse_read(const redis::value& v, std::uint32_t shard, std::vector<command_entry>& out,
                  std::string& last_id, std::string& error);
  std::optional<std::vector<command_entry>> read_all_shards(std::size_t count, std::string& error);
  bool wait_for_wake(std::chrono::milliseconds block, std::string& error);

  redis::connection conn_;
  redis::function_library library_;
  std::string instance_;
  std::size_t max_payload_;
  redis::key_shards shards_;
  std::string last_wake_ = "0-0";  ///< The newest wake entry seen (cluster only).
  int replicas_ = 0;
  std::chrono::milliseconds replicas_timeout_{1000};
};

/// Validates one stream entry's fields (name, value, name, value, ...). A nil body
/// (the entry was deleted while pending) is malformed too.
[[nodiscard]] command_entry parse_command_entry(std::string entry_id,
                                                const std::vector<std::string>& fields,
                                                bool body_present, std::size_t max_payload);

}  // namespace tgw::infra::commands
