#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "actors/ports/telemetry_store.hpp"
#include "infra/telemetry/projection.hpp"

namespace tgw::infra::telemetry {

// The telemetry port this store implements, in the words of its namespace.
using ports::journal_event;
using ports::packet_job;
using ports::record_fields;
using ports::write_op;
using ports::write_outcome;

/// One journal entry as `XRANGE journal:{imei}` shows it: type, at_ms, instance, then
/// the event's fields.
struct journal_entry {
  std::string imei;
  field_list fields;
};

/// A telemetry store in memory that does what the tgw_gateway Redis functions do: a
/// packet whose fingerprint is among the device's last accepted ones is journaled as
/// packet_resent and not stored; any other is stored and journaled as
/// records_accepted with the same fields, rendered to the same strings; events are
/// appended as given; the device projection is folded with telemetry::apply. The
/// clock stands in for the Redis server's TIME. Offline replay runs the live session
/// path against it; tests can use it as a fake that behaves.
class memory_telemetry_store final : public ports::telemetry_store {
 public:
  memory_telemetry_store(std::string instance, std::function<std::int64_t()> clock_ms);

  std::vector<write_outcome> write_batch(const std::vector<write_op>& ops) override;

  /// Every device's entries, in the order they were appended.
  [[nodiscard]] const std::vector<journal_entry>& journal() const noexcept { return journal_; }
  /// The projection `device:{imei}` would hold; nullptr for an unknown device.
  [[nodiscard]] const device_projection* device(const std::string& imei) const;
  /// Records added to the telemetry stream.
  [[nodiscard]] std::uint64_t records_stored() const noexcept { return records_stored_; }

 private:
  write_outcome persist(const packet_job& job, std::int64_t now);
  void append(const std::string& imei, field_list fields);

  std::string instance_;
  std::function<std::int64_t()> clock_ms_;
  std::vector<journal_entry> journal_;
  std::map<std::string, device_projection> devices_;
  std::uint64_t records_stored_ = 0;
};

}  // namespace tgw::infra::telemetry
