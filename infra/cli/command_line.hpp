#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tgw::infra {

/// The words of a command line as `tgw` takes them, before CLI11 parses them: a
/// `--config FILE` given after the subcommand (`tgw serve --config p.toml`) moves in
/// front of it, where the option lives, so either place works.
[[nodiscard]] std::vector<std::string> config_option_first(const CLI::App& app,
                                                           std::vector<std::string> args);

/// The command line with `--config FILE` added when TGW_CONFIG names FILE and the
/// command line names no config file itself: CLI11 reads the config file before the
/// environment, so the variable alone would never be read. `file` is FILE, or empty
/// when the variable was not used.
[[nodiscard]] std::vector<std::string> config_from_environment(std::vector<std::string> args,
                                                               std::string& file);

/// For a word where a subcommand belongs that is none (`tgw sevre`, `tgw command
/// sned`): the error naming it and the nearest subcommand of that level; empty when
/// every such word is one, or there is none.
[[nodiscard]] std::string unknown_subcommand(const CLI::App& app,
                                             const std::vector<std::string>& args);

/// Lets only the subcommands `args` names read their TGW_* variables. CLI11 reads the
/// environment into every subcommand, run or not, and checks what it read: a TGW_REDIS
/// that is no URL failed `tgw devices --redis URL` with the error of another
/// subcommand's --redis. Call before parsing.
void environment_for_chosen_only(CLI::App& app, const std::vector<std::string>& args);

/// CLI11's error made precise where it is vague: "Value abc not in range 1 to 10" and
/// "Could not convert: --port = abc", for a numeric option given no number, say that
/// it is not a number. Other errors unchanged.
[[nodiscard]] std::string explain_parse_error(const CLI::App& app, const std::string& message);

/// Environment variables kept by their design names besides the TGW_* one every flag
/// reads (JANITOR_INTERVAL_MS for TGW_JANITOR_INTERVAL_MS): copied to the TGW_* name
/// unless that is set. Call before parsing, before any thread starts.
void apply_environment_aliases();

/// The variable the user set for TGW_* variable `variable`: the design name it was
/// copied from by apply_environment_aliases(), else `variable` itself.
[[nodiscard]] std::string variable_set_for(const std::string& variable);

}  // namespace tgw::infra
