#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tgw::infra::telemetry {

/// Field/value pairs, as a journal entry or a HASH holds them.
using field_list = std::vector<std::pair<std::string, std::string>>;

/// The latest-state projection `device:{imei}` as a fold over the device's journal
/// (docs/events.md). A field stays unset until an event writes it, because the live
/// functions write a field only then: a device that never sent records has no
/// `records_total`. Text fields keep the journal's exact strings, so a rebuilt hash is
/// byte-equal to the one written live.
struct device_projection {
  std::optional<std::string> online;  ///< "1" or "0".
  std::optional<std::string> last_seen_ms;
  std::optional<std::string> instance;
  /// When the device's latest connection began (`identified`), and its records_total
  /// then ("0" before its first record): records since connecting are the difference.
  std::optional<std::string> connected_ms;
  std::optional<std::int64_t> records_at_connect;
  std::optional<std::string> last_fingerprint;
  /// The fingerprints of the earlier_fingerprint_count packets accepted before the
  /// latest, newest first, space-separated ("" after the first): a packet among them
  /// or the latest is a resend.
  std::optional<std::string> earlier_fingerprints;
  std::optional<std::string> last_ts;  ///< The newest record's time (`pos_ts`).
  std::optional<std::string> lon;
  std::optional<std::string> lat;
  std::optional<std::string> speed;
  std::optional<std::string> satellites;
  std::optional<std::int64_t> records_total;

  friend bool operator==(const device_projection&, const device_projection&) = default;
};

/// How many packets accepted before the latest a resend is still recognised among
/// (EARLIER_FINGERPRINTS in gateway_library.lua): three keep the field within Redis'
/// compact hash encoding.
inline constexpr std::size_t earlier_fingerprint_count = 3;

/// Whether a packet with `fingerprint` is one the device had accepted lately (the
/// latest or one of earlier_fingerprints): a resend, acknowledged again, not stored.
[[nodiscard]] bool recently_accepted(const device_projection& p, const std::string& fingerprint);

/// Folds one journal event into `p`. Unknown event types and events that do not
/// change the projection leave it as it is, so journals written by newer gateways
/// (command events, say) still fold. Call it qualified (`telemetry::apply`): with
/// std arguments, ADL also finds std::apply, which fails to compile.
void apply(device_projection& p, const field_list& event_fields);

/// The projection as HASH fields, in a fixed order, set fields only.
[[nodiscard]] field_list render(const device_projection& p);

/// The projection a `device:{imei}` HASH holds (HGETALL's pairs); fields it does not
/// know are left out, a records count that is no number reads as absent.
[[nodiscard]] device_projection parse(const field_list& hash);

/// One field on which two renderings disagree; nullopt where a side lacks it.
struct field_difference {
  std::string field;
  std::optional<std::string> current;
  std::optional<std::string> rebuilt;

  friend bool operator==(const field_difference&, const field_difference&) = default;
};

/// The fields of `current` and `rebuilt` that differ or exist on one side only,
/// sorted by field name.
[[nodiscard]] std::vector<field_difference> compare(const field_list& current,
                                                    const field_list& rebuilt);

}  // namespace tgw::infra::telemetry
