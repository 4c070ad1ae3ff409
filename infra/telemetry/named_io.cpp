#include "infra/telemetry/named_io.hpp"

#include <charconv>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgw::infra::telemetry {

void append_named_value(std::string& out, const io_element_info& info,
                        const stored_io_value& value) {
  const auto raw = value.number();
  if (!raw) {
    append_value_text(out, value);
    return;
  }
  if (const std::string* state = info.error_of(*raw)) {
    out += R"({"error":")";
    out += *state;
    out += "\"}";
    return;
  }
  // The wire's size where the entry recorded it: the device's, not the table's, says
  // where the sign bit is.
  const std::uint16_t size = value.size != 0 ? std::uint16_t{value.size} : info.bytes;
  if (info.multiplier != 1.0) {
    char buf[32];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, info.scaled(*raw, size)).ptr);
    return;
  }
  if (!info.is_signed) {
    append_value_text(out, value);
    return;
  }
  // Sign-extended from the size, exactly (no double on the way).
  std::int64_t v = static_cast<std::int64_t>(*raw);
  if (size > 0 && size < 8) {
    const std::uint64_t sign = std::uint64_t{1} << (size * 8 - 1);
    if ((*raw & sign) != 0 && *raw < (sign << 1))
      v = static_cast<std::int64_t>(*raw) - static_cast<std::int64_t>(sign << 1);
  }
  char buf[24];
  out += '"';
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  out += '"';
}

std::optional<io_size_mismatch> size_mismatch(const io_element_info& info,
                                              const stored_io_value& value) {
  if (value.size == 0 || info.kind == io_value_kind::bytes || value.size == info.bytes)
    return std::nullopt;
  return io_size_mismatch{value.id, value.size, info.bytes};
}

std::string named_io_text(const stored_io& io, const io_dictionary& names,
                          std::vector<io_size_mismatch>* mismatches) {
  // Each known element's values' JSON, elements in order of first occurrence: linear
  // in the record's elements, however often a device repeats an id.
  std::vector<std::pair<const io_element_info*, std::vector<std::string>>> found;
  std::unordered_map<const io_element_info*, std::size_t> slot;
  for (const stored_io_value& v : io) {
    const io_element_info* info = names.find(v.id);
    if (info == nullptr) continue;
    const auto [it, fresh] = slot.try_emplace(info, found.size());
    if (fresh) found.emplace_back(info, std::vector<std::string>{});
    if (mismatches != nullptr)
      if (auto m = size_mismatch(*info, v)) mismatches->push_back(*m);
    std::string json;
    append_named_value(json, *info, v);
    found[it->second].second.push_back(std::move(json));
  }
  std::string out = "{";
  for (const auto& [info, values] : found) {
    if (out.size() > 1) out += ',';
    out += '"';
    out += info->name;
    out += "\":";
    if (values.size() == 1) {
      out += values.front();
      continue;
    }
    out += '[';
    for (const std::string& json : values) {
      if (out.back() != '[') out += ',';
      out += json;
    }
    out += ']';
  }
  out += '}';
  return out;
}

nlohmann::ordered_json named_io(const stored_io& io, const io_dictionary& names,
                                std::vector<io_size_mismatch>* mismatches) {
  return nlohmann::ordered_json::parse(named_io_text(io, names, mismatches));
}

}  // namespace tgw::infra::telemetry
