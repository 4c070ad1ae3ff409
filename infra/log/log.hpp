#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace tgw::infra {

/// Sets up the process logger on stderr. `level` is an spdlog level name (trace,
/// debug, info, warn, error, critical, off); `format` is "text" or "json". Returns
/// false, changing nothing, for an unknown level or format.
bool setup_logging(const std::string& level, const std::string& format);

}  // namespace tgw::infra
