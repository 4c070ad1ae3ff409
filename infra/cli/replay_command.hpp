#pragma once

#include "infra/replay/offline_replay.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw replay CAPTURE...`: reads pcap/pcapng captures, reassembles the device
/// connections in them, and either runs them offline through the session logic
/// (`--offline`, events as JSON lines on stdout) or re-enacts the devices against a
/// gateway (`--to HOST:PORT`). A per-connection report goes to stderr. Exit code: 0
/// when every connection was answered as recorded, 1 for a difference or a capture
/// error, 2 for usage errors.
void add_replay_command(CLI::App& app, const replay::offline_runner& offline, int& exit_code);

}  // namespace tgw::infra
