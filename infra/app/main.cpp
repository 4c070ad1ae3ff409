#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "actors/gateway/run_gateway.hpp"
#include "actors/node/run_node.hpp"
#include "actors/replay/run_offline_replay.hpp"
#include "infra/app/termination.hpp"
#include "infra/cli/command_command.hpp"
#include "infra/cli/decode_command.hpp"
#include "infra/cli/node_command.hpp"
#include "infra/cli/projections_command.hpp"
#include "infra/cli/registry_command.hpp"
#include "infra/cli/replay_command.hpp"
#include "infra/cli/serve_command.hpp"
#include "infra/cli/simulate_command.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"tgw: a gateway for Teltonika GPS trackers", "tgw"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tgw 0.1.0");
  app.set_config("--config", "", "Read flags from this TOML/INI file");
  int exit_code = 0;
  tgw::infra::add_serve_command(app, tgw::actors::gateway::run_gateway, exit_code);
  tgw::infra::add_decode_command(app, exit_code);
  tgw::infra::add_registry_command(app, exit_code);
  tgw::infra::add_command_command(app, exit_code);
  tgw::infra::add_node_command(app, tgw::actors::node::run_node, exit_code);
  tgw::infra::add_simulate_command(app, exit_code);
  tgw::infra::add_projections_command(app, exit_code);
  tgw::infra::add_replay_command(app, tgw::actors::replay::run_offline_replay, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts, so only the main thread ever takes SIGINT/SIGTERM.
  tgw::infra::block_termination_signals();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tgw: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "tgw: unknown error\n";
  }
  return 2;
}
