#include "infra/telemetry/io_dictionary.hpp"

#include <algorithm>
#include <cmath>

#include "infra/telemetry/io_dictionary_file.hpp"
#include "infra/telemetry/io_elements_data.hpp"

namespace tgw::infra::telemetry {

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
  // 1.2000000000000002, and 12345 x 0.25 reads 3086.25.
  const double scale = std::pow(10.0, decimals_of(multiplier));
  return std::round(value * multiplier * scale) / scale;
}

int decimals_of(double multiplier) {
  // The fewest decimals that write the multiplier (0.5: 1, 0.25: 2, 2.5: 1, 0.001: 3),
  // its double's error aside; a product has no more than the multiplier has, since the
  // raw value is an integer. 15 is as many as a double holds.
  constexpr int most = 15;
  double scale = 1.0;
  for (int decimals = 0; decimals < most; ++decimals, scale *= 10.0) {
    const double shifted = multiplier * scale;
    if (std::abs(shifted - std::round(shifted)) <= 1e-9 * std::max(1.0, shifted)) return decimals;
  }
  return most;
}

const std::string* io_element_info::error_of(std::uint64_t raw) const {
  for (const auto& [code, state] : errors)
    if (code == raw) return &state;
  return nullptr;
}

std::optional<io_dictionary> io_dictionary::builtin(std::string_view family, std::string& error) {
  return from_text(io_elements_source(), family, "the shipped table", error);
}

std::optional<io_dictionary> io_dictionary::from_file(const std::string& path,
                                                      std::string_view family, std::string& error) {
  const auto text = read_dictionary_file(path, error);
  if (!text) return std::nullopt;
  return from_text(*text, family, path, error);
}

std::optional<io_dictionary> io_dictionary::from_text(std::string_view text,
                                                      std::string_view family,
                                                      std::string_view origin, std::string& error) {
  auto elements = parse_dictionary(text, origin, error);
  if (!elements) return std::nullopt;
  io_dictionary d;
  bool family_known = false;
  for (dictionary_element& e : *elements) {
    if (std::find(e.families.begin(), e.families.end(), family) == e.families.end()) continue;
    family_known = true;
    for (const auto& [id, known] : d.by_id_) {
      if (known.name == e.info.name) {
        error = std::string(origin) + ": ids " + std::to_string(id) + " and " +
                std::to_string(e.info.id) + " share the name '" + e.info.name + "' in family '" +
                std::string(family) + "'";
        return std::nullopt;
      }
    }
    const std::uint16_t id = e.info.id;
    if (!d.by_id_.emplace(id, std::move(e.info)).second) {
      error = std::string(origin) + ": id " + std::to_string(id) + " is listed twice for family '" +
              std::string(family) + "'";
      return std::nullopt;
    }
  }
  if (!family_known) {
    error = std::string(origin) + " has no IO elements for model '" + std::string(family) + "'";
    return std::nullopt;
  }
  return d;
}

std::vector<std::string> io_dictionary::models() {
  std::string error;
  const auto elements = parse_dictionary(io_elements_source(), "the shipped table", error);
  std::vector<std::string> out;
  if (!elements) return out;
  for (const auto& e : *elements)
    for (const auto& f : e.families)
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  return out;
}

const io_element_info* io_dictionary::find(std::uint16_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

}  // namespace tgw::infra::telemetry
