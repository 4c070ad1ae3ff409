#include "infra/telemetry/io_dictionary.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "infra/telemetry/io_elements_data.hpp"

namespace tgw::infra::telemetry {
namespace {

const nlohmann::json& table() {
  // Parsed once; a malformed table is a build defect that the unit tests catch.
  static const nlohmann::json parsed = nlohmann::json::parse(io_elements_source());
  return parsed;
}

}  // namespace

double io_element_info::scaled(std::uint64_t raw, std::uint16_t size) const {
  double value = static_cast<double>(raw);
  if (is_signed && size > 0 && size < 8) {
    const std::uint64_t sign = std::uint64_t{1} << (size * 8 - 1);
    if ((raw & sign) != 0)
      value = static_cast<double>(static_cast<std::int64_t>(raw) -
                                  static_cast<std::int64_t>(sign << 1));
  } else if (is_signed && size == 8) {
    value = static_cast<double>(static_cast<std::int64_t>(raw));
  }
  // Rounded to the multiplier's own decimals, so 12 x 0.1 reads 1.2, not
  // 1.2000000000000002.
  const int decimals =
      multiplier >= 1.0 ? 0 : static_cast<int>(std::lround(-std::log10(multiplier)));
  const double scale = std::pow(10.0, decimals);
  return std::round(value * multiplier * scale) / scale;
}

std::optional<io_dictionary> io_dictionary::builtin(std::string_view model, std::string& error) {
  const auto& models = table().at("models");
  const auto it = models.find(std::string(model));
  if (it == models.end()) {
    error = "no IO element table for model '" + std::string(model) + "'";
    return std::nullopt;
  }
  io_dictionary d;
  for (const auto& e : it->at("elements")) {
    io_element_info info;
    info.id = e.at("id").get<std::uint16_t>();
    info.name = e.at("name").get<std::string>();
    info.title = e.at("title").get<std::string>();
    info.bytes = e.at("bytes").get<std::uint16_t>();
    info.is_signed = e.value("signed", false);
    info.multiplier = e.value("multiplier", 1.0);
    info.unit = e.value("unit", std::string());
    d.by_id_.emplace(info.id, std::move(info));
  }
  return d;
}

std::vector<std::string> io_dictionary::models() {
  std::vector<std::string> out;
  for (const auto& [name, _] : table().at("models").items()) out.push_back(name);
  return out;
}

const io_element_info* io_dictionary::find(std::uint16_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

}  // namespace tgw::infra::telemetry
