#pragma once

#include <chrono>

#include "infra/redis/connection.hpp"
#include "infra/redis/resp_writer.hpp"
#include "infra/telemetry/telemetry_store.hpp"

namespace tgw::infra::telemetry {

struct store_settings {
  std::string instance_id;
  std::int64_t journal_maxlen = 1000;  ///< Per-device journal, approximate trim.
  std::int64_t telemetry_maxlen = 0;   ///< 0: the telemetry stream is never trimmed.
  /// After a batch holding packets, `WAIT ack_replicas timeout` on the same connection;
  /// packets count as persisted only if at least that many replicas confirmed. 0: no
  /// WAIT (the master's word is enough).
  int ack_replicas = 0;
  std::chrono::milliseconds ack_replicas_timeout{1000};
};

/// telemetry_store over hiredis and the `tgw_gateway` function library: a batch is
/// one pipeline of FCALLs, so one Redis round trip serves many devices' packets.
class redis_telemetry_store final : public telemetry_store {
 public:
  redis_telemetry_store(redis::connection::options where, store_settings settings);
  std::vector<write_outcome> write_batch(const std::vector<write_op>& ops) override;
  /// The server this store writes to (for logs).
  [[nodiscard]] std::string server() const { return conn_.server(); }

  /// Loads the function library; false with the reason when Redis refuses.
  bool load_library(std::string& error);

 private:
  // Turns the packets of a batch into failures when WAIT saw too few replicas.
  void require_replicas(const std::vector<write_op>& ops, const redis::value& wait_reply,
                        std::vector<write_outcome>& out) const;

  redis::connection conn_;
  store_settings settings_;
  bool loaded_ = false;
  /// The batch's commands in the wire protocol; reused, so it stops allocating.
  redis::resp_writer encoded_;
};

}  // namespace tgw::infra::telemetry
