#include "infra/cli/value_checks.hpp"

#include <CLI/CLI.hpp>

#include "codecs/imei.hpp"
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

const CLI::Validator& duration_check() {
  static const CLI::Validator check(
      [](std::string& text) {
        return parse_duration(text) ? std::string() : "not a duration (30s, 500ms, 2m): " + text;
      },
      "DURATION");
  return check;
}

}  // namespace tgw::infra
