#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw registry`: one IMEI's owner and whether it is alive, entry counts per
/// instance with liveness, dead owners, and `--once` for one janitor pass.
void add_registry_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
