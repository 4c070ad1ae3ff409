#pragma once

#include <optional>
#include <string>

#include "infra/telemetry/io_dictionary.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// `--names`, `--model` and `--io-dictionary`, for commands that print IO elements.
struct io_name_options {
  bool names = false;
  std::string model = "fmb";
  std::string dictionary;  ///< A dictionary file; empty: the shipped table.
};

/// Adds --names (described by `what`; left out when `with_flag` is false, for a
/// command that always names), --model and --io-dictionary to `cmd`, with their
/// environment variables TGW_IO_NAMES, TGW_IO_MODEL and TGW_IO_DICTIONARY.
void add_io_name_options(CLI::App* cmd, io_name_options& options, const std::string& what,
                         bool with_flag = true);

/// The table of `options.model` from --io-dictionary or the shipped table.
/// Prints the error and sets `exit_code` to 2 for a file that cannot be read or a
/// family it has no elements for.
std::optional<telemetry::io_dictionary> load_io_dictionary(const io_name_options& options,
                                                           const char* command, int& exit_code);

/// The table --names asks for; nullopt without --names (see load_io_dictionary).
std::optional<telemetry::io_dictionary> load_io_names(const io_name_options& options,
                                                      const char* command, int& exit_code);

}  // namespace tgw::infra
