#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/ports/store_failure.hpp"

namespace tgw::ports {

/// One record rendered as the fields of its telemetry stream entry, in this order:
/// ts, pri, lon, lat, alt, ang, sat, spd, evt, io (the format 4 IO array), gen
/// (the Codec 16 generation type; empty for other codecs).
using record_fields = std::array<std::string, 11>;

/// The version of the telemetry stream entry, its `v` field (docs/TELEMETRY.md).
inline constexpr const char* telemetry_format_version = "4";

/// A decoded AVL packet ready to persist. `fingerprint` identifies the exact bytes,
/// so a resend after a lost ACK is recognised.
struct packet_job {
  std::string imei;
  std::string fingerprint;
  std::vector<record_fields> records;
  std::string codec;  ///< "8", "8E" or "16", as codecs::codec_name writes it.
};

/// A journal event of one device. `online` is 1 or 0 to update the projection's
/// online flag, -1 to leave it.
struct journal_event {
  std::string imei;
  std::string type;
  int online = -1;
  std::vector<std::pair<std::string, std::string>> fields;
  /// Only for a device the store knows (its projection exists): for an unknown one
  /// nothing is written and the outcome says `unknown_device`. How many new devices a
  /// source may bring in is the gateway's budget, spent only when one is new.
  bool known_only = false;
};

/// What happened to one write.
struct write_outcome {
  bool ok = false;
  bool duplicate = false;  ///< A resent packet: acknowledged, not stored again.
  std::int64_t stored = 0;
  std::string error;  ///< Why it failed, in the store's words, for a log.
  /// Why it failed, for code to branch on: nothing answered (unreachable, timeout)
  /// apart from what the store refused (read_only, out_of_memory, ...).
  failure_kind failure = failure_kind::none;
  /// Why it failed, as an operator reads it (the persist log, the stall's label).
  failure_cause cause{};
  /// Stored, but fewer replicas confirmed it than --ack-replicas asks: not ACKed; the
  /// device's resend is recognised by its fingerprint.
  bool under_replicated = false;
  /// The store as a whole could not be reached (the writer backs off), as opposed to
  /// one server of a sharded store failing (the writer goes on: the other servers'
  /// devices are ACKed).
  bool unreachable = false;
  /// Not stored, and sending it again is safe: it did not run where it was sent (its
  /// slot moved, no master serves it, the connection was refused), or it is a packet,
  /// whose resend the store recognises by its fingerprint. The writer sends it again
  /// once the store may have found the slot's new master, within --persist-retry-ms.
  bool retryable = false;
  /// A `known_only` event of a device the store does not know: nothing written, and
  /// the round trip itself succeeded (`ok`).
  bool unknown_device = false;
};

/// One write of a batch: a packet or an event.
struct write_op {
  packet_job packet;  ///< Used when `is_packet`.
  journal_event event;
  bool is_packet = true;
};

/// Where device sessions persist: the port the telemetry writers write through.
/// Implemented by the telemetry adapter (infra/telemetry); `tgw replay --offline`
/// keeps records in memory (memory_telemetry_store there). Calls block; one instance
/// per thread.
class telemetry_store {
 public:
  virtual ~telemetry_store() = default;
  /// Writes every op in one round trip; one outcome per op, in order.
  virtual std::vector<write_outcome> write_batch(const std::vector<write_op>& ops) = 0;
};

}  // namespace tgw::ports
