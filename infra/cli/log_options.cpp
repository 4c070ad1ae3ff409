#include "infra/cli/log_options.hpp"

#include <CLI/CLI.hpp>

namespace tgw::infra {

void add_log_options(CLI::App* cmd, std::string& level, std::string& format,
                     const std::string& env_prefix) {
  cmd->add_option("--log-level", level, "trace, debug, info, warn, error, critical or off")
      ->envname(env_prefix + "_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  cmd->add_option("--log-format", format, "text or json")
      ->envname(env_prefix + "_LOG_FORMAT")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

}  // namespace tgw::infra
