#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw devices`: the devices connected now across every instance and key shard,
/// with their last packet and position (docs/OPERATIONS.md, "Devices"); with --imei one
/// device in full: its projection, latest journal events and open commands.
void add_devices_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
