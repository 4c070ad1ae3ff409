#include "infra/telemetry/named_io.hpp"

#include <charconv>
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
    // A decimal string (an 8-byte value above 2^53 - 1), all of it: a hex string (a
    // variable-length value) is no number, even where it starts with digits.
    const auto& text = raw.get_ref<const std::string&>();
    std::uint64_t parsed = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (ec == std::errc{} && end == text.data() + text.size() && !text.empty()) value = parsed;
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
