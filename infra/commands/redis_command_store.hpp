#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "actors/ports/command_store.hpp"
#include "infra/commands/command_keys.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/function_library.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::commands {

using ports::command_entry;
using ports::dispatch_outcome;
using ports::dispatch_status;
using ports::resolution;

/// The command store's Redis side: the consumer group, reads (pending first, then
/// new), and the atomic steps of the `tgw_commands` function library over one blocking
/// connection. One instance per thread (a detached actor).
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
class redis_command_store final : public ports::command_store {
 public:
  redis_command_store(redis::connection::options where, std::string instance_id,
                      std::size_t max_payload = 512, redis::key_shards shards = {},
                      bool allow_control_characters = false);

  /// FUNCTION LOAD REPLACE of `tgw_commands` (start-up; a call reloads it if lost).
  bool load_library(std::string& error);
  /// XGROUP CREATE commands:outbound:{me} ingest 0 MKSTREAM (in every shard); an
  /// existing group is fine.
  bool ensure_group(ports::store_failure& error);
  /// load_library() and ensure_group().
  bool prepare(ports::store_failure& error) override;
  /// Read from id 0, paged until empty.
  std::optional<std::vector<command_entry>> read_pending(ports::store_failure& error) override;
  /// XREADGROUP ... BLOCK; on a cluster `count` is per shard.
  std::optional<std::vector<command_entry>> read_new(std::chrono::milliseconds block,
                                                     std::size_t count,
                                                     ports::store_failure& error) override;
  /// tgw_cmd_resolve.
  bool resolve(const command_entry& entry, const resolution& outcome, ports::store_failure& error,
               std::int64_t journal_maxlen = 10000) override;
  /// tgw_cmd_resolve for each, through run_batch(): with require_replicas(), a batch
  /// fewer replicas confirmed fails whole.
  std::vector<ports::store_failure> resolve_all(
      std::span<const std::pair<command_entry, resolution>> outcomes,
      std::int64_t journal_maxlen) override;
  /// tgw_cmd_dispatched for each, through run_batch(): a reply of -1 is answered_already.
  std::vector<dispatch_outcome> dispatched_all(std::span<const command_entry* const> entries,
                                               std::int64_t journal_maxlen) override;
  /// tgw_cmd_dispatched for one entry (its reply is -1, and nothing is journaled, when
  /// the command was answered already: do not deliver it).
  bool dispatched(const command_entry& entry, ports::store_failure& error,
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
  std::vector<ports::store_failure> run_batch(const std::vector<std::vector<std::string>>& commands,
                                              std::vector<redis::value>* results = nullptr);
  /// From now on run_batch() ends with `WAIT replicas timeout` (--ack-replicas): a
  /// response is published only once a failover would keep it.
  void require_replicas(int replicas, std::chrono::milliseconds timeout) {
    replicas_ = replicas;
    replicas_timeout_ = timeout;
  }
  /// tgw_cmd_drain_offline in the device's key shard.
  std::optional<std::size_t> drain_offline(const std::string& imei,
                                           ports::store_failure& error) override;
  /// tgw_cmd_orphans in batches, shard by shard, until the stream is gone.
  std::optional<orphan_counts> adopt_orphans(const std::string& dead_instance,
                                             ports::store_failure& error) override;
  /// SMEMBERS commands:instances, and EXISTS each member's heartbeat (every shard).
  std::optional<std::vector<std::string>> orphan_candidates(ports::store_failure& error) override;

  [[nodiscard]] const std::string& instance_id() const override { return instance_; }
  /// This instance's outbound stream in `shard`.
  [[nodiscard]] std::string stream(std::uint32_t shard = 0) const {
    return keys::outbound(instance_, shards_.prefix(shard));
  }

 private:
  redis::value call(const std::vector<std::string>& argv);
  /// Parses an XREADGROUP reply of one stream; appends to `out`, advances `last_id`.
  /// False with `error` on a Redis error; a missing group is re-created.
  bool parse_read(const redis::value& v, std::uint32_t shard, std::vector<command_entry>& out,
                  std::string& last_id, ports::store_failure& error);
  std::optional<std::vector<command_entry>> read_all_shards(std::size_t count,
                                                            ports::store_failure& error);
  bool wait_for_wake(std::chrono::milliseconds block, ports::store_failure& error);

  redis::connection conn_;
  redis::function_library library_;
  std::string instance_;
  std::size_t max_payload_;
  bool allow_control_characters_ = false;
  redis::key_shards shards_;
  std::string last_wake_ = "0-0";  ///< The newest wake entry seen (cluster only).
  int replicas_ = 0;
  std::chrono::milliseconds replicas_timeout_{1000};
};

}  // namespace tgw::infra::commands
