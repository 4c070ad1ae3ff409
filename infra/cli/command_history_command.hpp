#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw command history` under `command`: every command Redis keeps for one device,
/// with its text, publisher, status and reply, in the order they were published.
void add_command_history(CLI::App* command, int& exit_code);

}  // namespace tgw::infra
