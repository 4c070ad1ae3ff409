#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw simulate`: a fleet of simulated Teltonika trackers that connect to a
/// gateway, send AVL packets, wait for ACKs, resend and reconnect as devices do, and
/// answer Codec 12/14 commands. Prints a progress line each second on stderr and a
/// summary on stdout. Exit code: 0 when packets were ACKed, 1 when none was or the
/// gateway ACKed a corrupted packet, 2 for usage or setup errors.
void add_simulate_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
