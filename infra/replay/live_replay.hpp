#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "infra/capture/recorded_connection.hpp"
#include "infra/replay/gateway_answers.hpp"

namespace tgw::infra::replay {

struct live_settings {
  std::string host;
  std::uint16_t port = 0;
  /// Recorded pauses are divided by this; 0 sends as fast as the answers allow.
  double speed = 1.0;
  /// How long to wait for an answer the recording shows the gateway gave.
  std::chrono::milliseconds answer_timeout{5000};
  /// Called about once a second, from the calling thread, with the connections
  /// finished and in all (for progress output).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

/// `tgw replay --to`: re-enacts the device side of every recorded connection against
/// a gateway, each on its own thread with blocking sockets (a client tool; nothing
/// else runs here). Connections start at their recorded offsets; a device sends its
/// bytes at the recorded pace, and where the recording shows the gateway answering
/// (01, an ACK) it waits for as many bytes before going on, as a device would. The
/// report compares what the gateway sent with the recording.
[[nodiscard]] std::vector<connection_report> replay_live(const capture::capture_set& capture,
                                                         const live_settings& settings);

}  // namespace tgw::infra::replay
