#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw command send` (publish one command to a device and wait for its response)
/// and `tgw command watch` (tail commands:responses). Exit codes of send: 0 responded;
/// 1 failed, offline, no response in time or Redis unreachable; 2 usage; 3 queued.
void add_command_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
