#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tgw::infra {

/// The reader of `tgw --config FILE`: TOML (parsed by toml++), with two rules of its own.
/// A key at the top of the file applies to whichever subcommand runs, if it has that
/// option (`redis = "..."` serves `serve`, `registry` and `command send` alike); a key in
/// a `[serve]` or `[command.send]` section applies to that subcommand only and wins over
/// the top level. A key or section that no subcommand knows is an error that names it
/// and the file, instead of being ignored: a misspelt setting must not pass unnoticed.
class config_file final : public CLI::ConfigBase {
 public:
  explicit config_file(const CLI::App& app) : app_(app) {}
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  const CLI::App& app_;
};

/// Adds `--config FILE` (TGW_CONFIG) to `app`, read by config_file. The variable is
/// applied by config_from_environment() before parsing (CLI11 reads the file before it
/// reads the environment).
void add_config_option(CLI::App& app);

}  // namespace tgw::infra
