#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codecs/codec_id.hpp"
#include "codecs/tcp_framer.hpp"
#include "infra/capture/recorded_connection.hpp"
#include "infra/replay/gateway_answers.hpp"
#include "infra/telemetry/projection.hpp"

namespace tgw::infra::replay {

/// How the offline gateway is set up; the same knobs as `tgw serve`.
struct offline_settings {
  codecs::crc_policy crc = codecs::crc_policy::strict;
  std::size_t max_frame_size = codecs::default_max_frame_size;
  /// Written as each event's `instance` in the in-memory journal (never printed).
  std::string instance = "replay";
};

/// One journal event of the offline run.
struct replay_event {
  std::int64_t t_ms = 0;  ///< The virtual clock when it was journaled: capture time.
  std::string imei;
  /// type first, then the event's own fields; at_ms and instance left out.
  telemetry::field_list fields;
};

struct offline_result {
  std::vector<replay_event> events;
  std::vector<connection_report> reports;
};

/// Runs a capture through the gateway's session logic with a virtual clock. Supplied
/// by the composition root (infra/app/run_offline_replay.hpp: it needs the actors),
/// called by `tgw replay --offline`.
using offline_runner =
    std::function<offline_result(const capture::capture_set&, const offline_settings&)>;

/// One event as a JSON line: {"t_ms":...,"imei":"...","type":"...", fields as strings}.
[[nodiscard]] std::string to_json_line(const replay_event& e);

}  // namespace tgw::infra::replay
