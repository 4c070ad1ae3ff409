#include "infra/cli/value_checks.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "codecs/imei.hpp"
#include "infra/redis/redis_url.hpp"
#include "infra/text/duration.hpp"

namespace tgw::infra {

const CLI::Validator& device_imei_check() {
  static const CLI::Validator check(
      [](std::string& text) {
        return codecs::valid_imei(text) ? std::string()
                                        : "an IMEI is 15 or 16 digits: '" + text + "'";
      },
      "IMEI");
  return check;
}

const CLI::Validator& redis_url_check() {
  static const CLI::Validator check(
      [](std::string& text) {
        std::string error;
        return redis::parse_redis_url(text, error) ? std::string() : error;
      },
      "URL");
  return check;
}

const CLI::Validator& duration_check() {
  static const CLI::Validator check(
      [](std::string& text) {
        return parse_duration(text) ? std::string() : "not a duration (30s, 500ms, 2m): " + text;
      },
      "DURATION");
  return check;
}

namespace {

// A number as strtod reads all of `text`, or nullopt.
std::optional<double> number_in(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

// CLI11's NonNegativeNumber and PositiveNumber name their bound as the largest double,
// printed in full: a 309-digit number in an error message. These say it in words.
const CLI::Validator& non_negative_number() {
  static const CLI::Validator check(
      [](std::string& text) {
        const auto value = number_in(text);
        if (!value) return "'" + text + "' is not a number (expected a number, 0 or more)";
        return *value < 0 ? "'" + text + "' is negative (expected a number, 0 or more)"
                          : std::string();
      },
      "NONNEGATIVE");
  return check;
}

const CLI::Validator& positive_number() {
  static const CLI::Validator check(
      [](std::string& text) {
        const auto value = number_in(text);
        if (!value) return "'" + text + "' is not a number (expected a number above 0)";
        return *value <= 0 ? "'" + text + "' is not above 0 (expected a number above 0)"
                           : std::string();
      },
      "POSITIVE");
  return check;
}

}  // namespace tgw::infra
