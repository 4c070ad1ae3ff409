#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw telemetry tail`: follow the records the gateways store, of one IMEI or all.
void add_telemetry_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
