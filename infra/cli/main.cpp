#include <cctype>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "infra/app/run_gateway.hpp"
#include "infra/app/run_node.hpp"
#include "infra/app/run_offline_replay.hpp"
#include "infra/cli/api_command.hpp"
#include "infra/cli/command_command.hpp"
#include "infra/cli/command_line.hpp"
#include "infra/cli/config_file.hpp"
#include "infra/cli/decode_command.hpp"
#include "infra/cli/devices_command.hpp"
#include "infra/cli/node_command.hpp"
#include "infra/cli/projections_command.hpp"
#include "infra/cli/registry_command.hpp"
#include "infra/cli/replay_command.hpp"
#include "infra/cli/serve_command.hpp"
#include "infra/cli/simulate_command.hpp"
#include "infra/cli/sink_command.hpp"
#include "infra/cli/telemetry_command.hpp"
#include "infra/net/tls_memory.hpp"
#include "infra/process/build_info.hpp"
#include "infra/process/termination.hpp"

namespace {

// The environment variable that supplied the value a parse error is about: CLI11 names
// only the flag, and an operator who never typed it needs to know where it came from.
std::string environment_source(const CLI::App& app, const std::string& message, int argc,
                               char** argv) {
  std::vector<const CLI::App*> apps = {&app};
  for (std::size_t i = 0; i < apps.size(); ++i)
    for (const CLI::App* sub : apps[i]->get_subcommands({})) apps.push_back(sub);
  for (const CLI::App* a : apps) {
    if (!a->parsed() && a != &app) continue;
    for (const CLI::Option* opt : a->get_options()) {
      const std::string& variable = opt->get_envname();
      if (variable.empty() || opt->get_lnames().empty()) continue;
      // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread starts
      if (std::getenv(variable.c_str()) == nullptr) continue;
      const std::string flag = "--" + opt->get_lnames().front();
      const auto at = message.find(flag);
      const bool whole = at != std::string::npos &&
                         (at + flag.size() == message.size() ||
                          !(std::isalnum(static_cast<unsigned char>(message[at + flag.size()])) ||
                            message[at + flag.size()] == '-'));
      // Typed on the command line, the flag wins over the variable: not this case.
      bool typed = false;
      for (int i = 1; i < argc; ++i)
        typed |=
            std::string_view(argv[i]) == flag || std::string_view(argv[i]).starts_with(flag + "=");
      if (whole && !typed) return variable;
    }
  }
  return "";
}

int run(int argc, char** argv) {
  CLI::App app{"tgw: a gateway for Teltonika GPS trackers", "tgw"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tgw " + std::string(tgw::infra::process::version()) +
                                        " (commit " + std::string(tgw::infra::process::commit()) +
                                        ")");
  app.footer(
      "tgw node is a separate system that shares only the Redis plumbing: the cluster "
      "nodes of docs/NODE.md, not part of the gateway.");
  tgw::infra::add_config_option(app);
  int exit_code = 0;
  tgw::infra::add_serve_command(app, tgw::infra::app::run_gateway, exit_code);
  tgw::infra::add_decode_command(app, exit_code);
  tgw::infra::add_registry_command(app, exit_code);
  tgw::infra::add_devices_command(app, exit_code);
  tgw::infra::add_command_command(app, exit_code);
  tgw::infra::add_node_command(app, tgw::infra::app::run_node, exit_code);
  tgw::infra::add_simulate_command(app, exit_code);
  tgw::infra::add_projections_command(app, exit_code);
  tgw::infra::add_telemetry_command(app, exit_code);
  tgw::infra::add_sink_command(app, exit_code);
  tgw::infra::add_replay_command(app, tgw::infra::app::run_offline_replay, exit_code);
  tgw::infra::add_api_command(app, exit_code);
  tgw::infra::apply_environment_aliases();
  std::string config_from_environment;
  std::vector<std::string> args = tgw::infra::config_from_environment(
      std::vector<std::string>(argv, argv + argc), config_from_environment);
  if (const std::string unknown = tgw::infra::unknown_subcommand(app, args); !unknown.empty()) {
    std::cerr << "tgw: " << unknown << '\n';
    return 2;
  }
  args = tgw::infra::config_option_first(app, std::move(args));
  tgw::infra::environment_for_chosen_only(app, args);
  // CLI11 takes the arguments in reverse, program name excluded.
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    const std::string message = tgw::infra::explain_parse_error(app, e.what());
    if (!config_from_environment.empty() &&
        message.find(config_from_environment) != std::string::npos) {
      std::cerr << message
                << " (the file is named by the environment variable TGW_CONFIG)\nRun with "
                   "--help for more information.\n";
      return 2;
    }
    if (const std::string variable = environment_source(app, message, argc, argv);
        !variable.empty()) {
      std::cerr << message << " (the value comes from the environment variable "
                << tgw::infra::variable_set_for(variable)
                << ")\nRun with --help for more information.\n";
      return 2;
    }
    if (message != e.what()) {
      std::cerr << message << "\nRun with --help for more information.\n";
      return 2;
    }
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts, so only the main thread ever takes SIGINT/SIGTERM.
  tgw::infra::process::block_termination_signals();
  // Before anything calls OpenSSL: its allocator can only be set then.
  tgw::infra::net::guard_tls_memory();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tgw: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "tgw: unknown error\n";
  }
  return 2;
}
