#include "infra/telemetry/named_io.hpp"

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

namespace tgw::infra::telemetry {

nlohmann::ordered_json named_value(const io_element_info& info, const nlohmann::ordered_json& raw) {
  std::optional<std::uint64_t> value;
  if (raw.is_number_unsigned()) value = raw.get<std::uint64_t>();
  if (raw.is_number_integer() && raw.get<std::int64_t>() >= 0)
    value = static_cast<std::uint64_t>(raw.get<std::int64_t>());
  if (raw.is_string()) {
    try {
      value = std::stoull(raw.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  if (!value || (info.multiplier == 1.0 && !info.is_signed)) return raw;
  return info.scaled(*value, info.bytes);
}

nlohmann::ordered_json named_io(const nlohmann::ordered_json& io, const io_dictionary& names) {
  nlohmann::ordered_json named = nlohmann::ordered_json::object();
  if (!io.is_object()) return named;
  for (const auto& [key, value] : io.items()) {
    std::uint16_t element = 0;
    try {
      const unsigned long id = std::stoul(key);
      if (id > 0xFFFF) continue;
      element = static_cast<std::uint16_t>(id);
    } catch (const std::exception&) {
      continue;
    }
    if (const auto* info = names.find(element)) named[info->name] = named_value(*info, value);
  }
  return named;
}

}  // namespace tgw::infra::telemetry
