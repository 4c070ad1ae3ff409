#pragma once

#include <optional>
#include <string>

#include "infra/telemetry/io_dictionary.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// `--names` and `--model`, for commands that print IO elements.
struct io_name_options {
  bool names = false;
  std::string model = "fmb";
};

/// Adds --names (described by `what`) and --model to `cmd`.
/// Adds --names and --model, read from <env_prefix>_NAMES and <env_prefix>_MODEL too.
void add_io_name_options(CLI::App* cmd, io_name_options& options, const std::string& what,
                         const std::string& env_prefix);

/// The table --names asks for; nullopt without --names. Prints the error and sets
/// `exit_code` to 2 for a model the build has no table for.
std::optional<telemetry::io_dictionary> load_io_names(const io_name_options& options,
                                                      const char* command, int& exit_code);

}  // namespace tgw::infra
