#include "infra/cli/io_name_options.hpp"

#include <iostream>

#include <CLI/CLI.hpp>

namespace tgw::infra {

void add_io_name_options(CLI::App* cmd, io_name_options& options, const std::string& what,
                         const std::string& env_prefix) {
  cmd->add_flag("--names", options.names, what)->envname(env_prefix + "_NAMES");
  cmd->add_option("--model", options.model, "Device family of the IO element names")
      ->envname(env_prefix + "_MODEL")
      ->check(CLI::IsMember(telemetry::io_dictionary::models()))
      ->capture_default_str();
}

std::optional<telemetry::io_dictionary> load_io_names(const io_name_options& options,
                                                      const char* command, int& exit_code) {
  if (!options.names) return std::nullopt;
  std::string error;
  auto names = telemetry::io_dictionary::builtin(options.model, error);
  if (!names) {
    std::cerr << command << ": --model: " << error << '\n';
    exit_code = 2;
  }
  return names;
}

}  // namespace tgw::infra
