#pragma once

#include <functional>

#include "infra/app/gateway_plan.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// Runs the gateway of a plan until SIGINT/SIGTERM; returns the exit code
/// (infra/app/run_gateway.hpp).
using serve_runner = std::function<int(const app::gateway_plan&)>;

/// Adds `tgw serve`.
void add_serve_command(CLI::App& app, const serve_runner& run, int& exit_code);

}  // namespace tgw::infra
