#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "actors/ports/node_store.hpp"
#include "infra/redis/connection.hpp"
#include "infra/redis/function_library.hpp"

namespace tgw::infra::node {

using ports::completion;
using ports::emit_result;
using ports::membership_view;

/// Timings of the cluster protocol; defaults are the cluster-node design's.
struct node_timing {
  std::chrono::milliseconds inactive_after{1000};  ///< Silence that gets a node removed.
  std::chrono::milliseconds key_ttl{10000};        ///< TTL of every nodes:* key.
  std::int64_t max_messages = 0;                   ///< Total the cluster emits; 0 for no limit.
  std::int64_t queue_limit = 0;  ///< Emits wait while the queue is this long; 0: no limit.
};

/// node_store over one Redis connection and the `tgw_node` function library.
class redis_node_store final : public ports::node_store {
 public:
  redis_node_store(redis::connection::options where, node_timing timing, bool record_handled);

  /// Loads the function library (FUNCTION LOAD REPLACE). False with the reason in
  /// last_error() when Redis is unreachable or refuses it.
  bool load_library();

  std::optional<membership_view> join(const std::string& id) override;
  std::optional<membership_view> health_check(const std::string& id) override;
  emit_result emit(const std::string& id, std::int64_t epoch, int count) override;
  std::optional<std::string> take(const std::string& id, std::chrono::milliseconds wait) override;
  completion complete(const std::string& id, const std::string& message, bool failed,
                      const std::string& reason) override;
  void leave(const std::string& id) override;
  [[nodiscard]] ports::store_failure last_failure() const override { return last_failure_; }
  /// The last failure's words, for a log line; empty when the last call succeeded.
  [[nodiscard]] std::string last_error() const { return last_error_; }

  /// Returns and deletes the error list in one step (`tgw node --getErrors`).
  std::optional<std::vector<std::string>> take_errors();

 private:
  /// The name of a node key: on a Redis Cluster every node key carries one hash tag,
  /// so the election and the queue stay single-slot calls on one master, as on a
  /// single node; their load is a few calls a second per node.
  static constexpr const char* cluster_tag = "{tgw-node}";
  [[nodiscard]] std::string key(const char* name) const { return prefix_ + name; }

  std::string prefix_;
  redis::value call(std::vector<std::string> argv);
  std::optional<membership_view> view_of(const redis::value& v);

  redis::connection conn_;
  redis::function_library library_;
  node_timing timing_;
  bool record_handled_;
  std::string last_error_;
  ports::store_failure last_failure_;
};

}  // namespace tgw::infra::node
