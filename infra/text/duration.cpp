#include "infra/text/duration.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace tgw::infra {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  std::int64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc{} || ptr == text.data() || n < 0) return std::nullopt;
  const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  std::int64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1000;
  } else if (unit == "ms") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else {
    return std::nullopt;
  }
  if (n > std::numeric_limits<std::int64_t>::max() / scale) return std::nullopt;
  return std::chrono::milliseconds{n * scale};
}

std::string format_duration(std::chrono::milliseconds d) {
  const std::int64_t ms = d.count();
  if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace tgw::infra
