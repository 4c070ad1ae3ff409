#pragma once

#include <chrono>
#include <span>

#include "actors/ports/telemetry_store.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/function_library.hpp"
#include "infra/redis/key_shards.hpp"
#include "infra/redis/resp_writer.hpp"

namespace tgw::infra::telemetry {

// The telemetry port this adapter implements, in the words of its namespace.
using ports::journal_event;
using ports::packet_job;
using ports::record_fields;
using ports::write_op;
using ports::write_outcome;

struct store_settings {
  std::string instance_id;
  std::int64_t journal_maxlen = 1000;  ///< Per-device journal, approximate trim.
  std::int64_t telemetry_maxlen = 0;   ///< 0: the telemetry stream is never trimmed.
  /// After a batch holding packets, `WAIT ack_replicas timeout` on the same connection;
  /// packets count as persisted only if at least that many replicas confirmed. 0: no
  /// WAIT (the master's word is enough).
  int ack_replicas = 0;
  std::chrono::milliseconds ack_replicas_timeout{1000};
  /// Where each device's keys live: one unprefixed shard on a single node.
  redis::key_shards shards{};
};

/// telemetry_store over hiredis and the `tgw_gateway` function library: a batch is
/// one pipeline of FCALLs, so one Redis round trip serves many devices' packets.
class redis_telemetry_store final : public ports::telemetry_store {
 public:
  redis_telemetry_store(redis::connection::options where, store_settings settings);
  std::vector<write_outcome> write_batch(const std::vector<write_op>& ops) override;
  /// The server this store writes to (for logs).
  [[nodiscard]] std::string server() const { return conn_.server(); }

  /// Loads the function library; false with the reason when Redis refuses.
  bool load_library(std::string& error);

  /// The start-up canary: one packet through write_batch's own path (the pipelined
  /// FCALL tgw_persist_batch, then WAIT when --ack-replicas asks) on probe keys
  /// (telemetry:probe:{instance}, journal:probe:{instance}, device:probe:{instance},
  /// under the key families an ACL grants), deleted afterwards; what deleting them
  /// failed with goes to `cleanup_error`. The outcome is the writers' own.
  write_outcome probe(std::string& cleanup_error);

 private:
  // Turns the ops of a batch (packets and events) into failures when WAIT saw too few
  // replicas. `covered` are the ops (indices into the batch) whose writes it followed.
  void require_replicas(std::span<const std::size_t> covered, const redis::value& wait_reply,
                        std::vector<write_outcome>& out) const;
  // Marks `o` failed with Redis' `kind` and words: the port's kind, and the cause an
  // operator reads (an ACL refusal names its command, from this store's library).
  void fail(write_outcome& o, redis::failure_kind kind, const std::string& text) const;
  // Fills order_ with the ops' indices grouped by key shard, bounds_ with each
  // shard's range in it.
  void group_by_shard(const std::vector<write_op>& ops);

  redis::connection conn_;
  redis::function_library library_;
  store_settings settings_;
  std::string probe_stream_;  // set during probe(): the stream key's name in its shard
  // A batch's grouping by key shard and by master, kept between batches so that they
  // stop allocating.
  struct call {
    std::size_t first, last;  // into order_
  };
  // One master's round trip: its shards' calls in the wire protocol, then one WAIT.
  struct group {
    std::size_t master = 0;  // in the cluster's map; 0 on a single node
    redis::resp_writer encoded;
    std::vector<call> calls;
    std::size_t wait_reply = 0;  // the WAIT's place among the replies
    bool written = false;        // the pipeline went out whole
    bool sent = false;           // some of it may have reached the master
    redis::value send_failed;    // why it did not go out
    std::vector<redis::value> replies;
  };
  group& group_for(std::size_t master);
  // Puts every shard's calls in the group of the master that serves it.
  void group_all(const std::vector<write_op>& ops, std::vector<write_outcome>& out);
  // Adds the WAIT to a group's calls; false (its ops failed) if the encoding is wrong.
  bool finish_group(group& g, std::vector<write_outcome>& out);
  // Writes a group's pipeline to its master without reading the replies.
  void send_group(group& g);
  // Reads the replies of what send_group() wrote.
  void receive_group(group& g);
  // The outcomes of a group's ops from its replies.
  void settle_group(const group& g, const std::vector<write_op>& ops,
                    std::vector<write_outcome>& out);
  // The slot every key of `shard` hashes to (its hash tag's).
  std::uint16_t slot_of_shard(std::uint32_t shard);
  void fail_shard(std::uint32_t shard, const redis::value& why, bool retryable,
                  std::vector<write_outcome>& out) const;

  std::vector<std::size_t> order_;
  std::vector<std::size_t> bounds_;
  std::vector<std::size_t> next_;
  std::vector<std::uint32_t> shard_of_;
  std::vector<group> groups_;
  std::size_t groups_used_ = 0;
  std::vector<std::uint16_t> shard_slots_;
  std::vector<std::size_t> covered_;
  std::vector<redis::value> lessons_;  // replies the cluster's map learns from, after a batch
  // A Redis Cluster: one master of several failing is not the store failing.
  bool on_cluster_ = false;
};

}  // namespace tgw::infra::telemetry
