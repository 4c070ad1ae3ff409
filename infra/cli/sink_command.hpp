#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw sink postgres`: the telemetry stream into PostgreSQL (docs/TELEMETRY.md).
void add_sink_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
