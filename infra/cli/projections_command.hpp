#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw projections rebuild`: replays device journals into their latest-state
/// projections, or with --dry-run reports where the stored projections differ.
void add_projections_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
