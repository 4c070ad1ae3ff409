#include "infra/cli/io_name_options.hpp"

#include <iostream>

#include <CLI/CLI.hpp>

namespace tgw::infra {

void add_io_name_options(CLI::App* cmd, io_name_options& options, const std::string& what,
                         bool with_flag) {
  if (with_flag) cmd->add_flag("--names", options.names, what)->envname("TGW_IO_NAMES");
  // Not checked against the shipped families here: a dictionary file may have others.
  cmd->add_option("--model", options.model,
                  "Device family of the IO element names (shipped: fmb, fmc, fmm)")
      ->envname("TGW_IO_MODEL")
      ->capture_default_str();
  cmd->add_option("--io-dictionary", options.dictionary,
                  "IO element dictionary file, JSON or CSV (docs/CODECS.md); default: the "
                  "shipped table")
      ->envname("TGW_IO_DICTIONARY")
      ->check(CLI::ExistingFile);
}

std::optional<telemetry::io_dictionary> load_io_dictionary(const io_name_options& options,
                                                           const char* command, int& exit_code) {
  std::string error;
  auto names = options.dictionary.empty()
                   ? telemetry::io_dictionary::builtin(options.model, error)
                   : telemetry::io_dictionary::from_file(options.dictionary, options.model, error);
  if (!names) {
    std::cerr << command << ": " << (options.dictionary.empty() ? "--model: " : "--io-dictionary: ")
              << error << '\n';
    exit_code = 2;
  }
  return names;
}

std::optional<telemetry::io_dictionary> load_io_names(const io_name_options& options,
                                                      const char* command, int& exit_code) {
  if (!options.names) return std::nullopt;
  return load_io_dictionary(options, command, exit_code);
}

}  // namespace tgw::infra
