#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace tgw::infra {

/// A duration written as "500ms", "30s", "2m", "1h" or plain seconds ("30"). Negative
/// values, fractions and unknown units give nullopt.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// The shortest exact form: "30s", "2m", "1500ms".
[[nodiscard]] std::string format_duration(std::chrono::milliseconds d);

}  // namespace tgw::infra
