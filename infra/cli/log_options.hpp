#pragma once

#include <string>

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds --log-level and --log-format to `cmd`, read from <env_prefix>_LOG_LEVEL and
/// <env_prefix>_LOG_FORMAT too, both checked against what setup_logging takes.
void add_log_options(CLI::App* cmd, std::string& level, std::string& format,
                     const std::string& env_prefix = "TGW");

}  // namespace tgw::infra
