#include "infra/telemetry/stored_io.hpp"

#include <charconv>

namespace tgw::infra::telemetry {
namespace {

using kind_t = stored_io_value::kind_t;

/// Integers above this lose precision in a double, which is how JavaScript and most
/// JSON parsers read a bare number (2^53 - 1, Number.MAX_SAFE_INTEGER).
constexpr std::uint64_t max_exact_json_integer = (std::uint64_t{1} << 53) - 1;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Decimal digits of a value within 64 bits, without leading zeros (JSON's own rule).
std::optional<std::uint64_t> decimal(std::string_view s) {
  if (s.empty() || (s.size() > 1 && s.front() == '0')) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool hex_bytes(std::string_view s) {
  if (s.size() % 2 != 0) return false;
  for (const char c : s)
    if (!is_hex(c)) return false;
  return true;
}

std::optional<std::uint16_t> element_id(std::string_view s) {
  const auto v = decimal(s);
  if (!v || *v > 0xFFFF) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

// A format 1/2 string value, by the rules of read_io.
std::optional<stored_io_value> format2_string(std::uint16_t id, std::string_view s,
                                              std::string_view codec) {
  const auto v = decimal(s);
  const bool has_nx = codec != "8" && codec != "16";
  if (v && (!has_nx || *v > max_exact_json_integer))
    return stored_io_value{id, kind_t::integer, std::string(s)};
  if (has_nx && hex_bytes(s)) return stored_io_value{id, kind_t::bytes, std::string(s)};
  return std::nullopt;
}

// A cursor over text in the one form the gateway writes (no whitespace); any other
// form goes to the general parser.
struct scanner {
  std::string_view s;
  std::size_t at = 0;

  bool next(char c) {
    if (at < s.size() && s[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  bool next(std::string_view word) {
    if (s.substr(at, word.size()) != word) return false;
    at += word.size();
    return true;
  }
  template <class Accept>
  std::string_view run(Accept accept) {
    const std::size_t from = at;
    while (at < s.size() && accept(s[at])) ++at;
    return s.substr(from, at - from);
  }
  [[nodiscard]] bool done() const { return at == s.size(); }
};

// Whether `size` is a fixed-width element's size and `value` fits in it.
bool fits(std::uint64_t size, std::uint64_t value) {
  if (size != 1 && size != 2 && size != 4 && size != 8) return false;
  return size == 8 || value >> (8 * size) == 0;
}

// Formats 3 and 4 (`sized`: every integer with its wire size after it).
std::optional<stored_io> scan_format3(std::string_view text, bool sized) {
  scanner in{text};
  stored_io out;
  if (!in.next('[')) return std::nullopt;
  if (in.next(']')) return in.done() ? std::optional<stored_io>(std::move(out)) : std::nullopt;
  do {
    if (!in.next('[')) return std::nullopt;
    const auto id = element_id(in.run(is_digit));
    if (!id || !in.next(',')) return std::nullopt;
    if (in.next('"')) {
      const std::string_view digits = in.run(is_digit);
      const auto value = decimal(digits);
      if (!value || !in.next('"')) return std::nullopt;
      std::uint8_t size = 0;
      if (sized) {
        const auto wire = decimal(in.next(',') ? in.run(is_digit) : std::string_view());
        if (!wire || !fits(*wire, *value)) return std::nullopt;
        size = static_cast<std::uint8_t>(*wire);
      }
      out.push_back({*id, kind_t::integer, std::string(digits), size});
    } else if (in.next(R"({"hex":")")) {
      const std::string_view hex = in.run(is_hex);
      if (hex.size() % 2 != 0 || !in.next('"') || !in.next('}')) return std::nullopt;
      out.push_back({*id, kind_t::bytes, std::string(hex)});
    } else {
      return std::nullopt;
    }
    if (!in.next(']')) return std::nullopt;
  } while (in.next(','));
  if (!in.next(']') || !in.done()) return std::nullopt;
  return out;
}

std::optional<stored_io> parse_format3(std::string_view text, bool sized, std::string& error) {
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    error = "io is not a JSON array";
    return std::nullopt;
  }
  stored_io out;
  const std::size_t most = sized ? 3 : 2;
  for (const auto& element : doc) {
    if (!element.is_array() || element.size() < 2 || element.size() > most ||
        !element[0].is_number_unsigned() || element[0].get<std::uint64_t>() > 0xFFFF) {
      error = std::string("io has an element that is not ") +
              (sized ? "[id, value, size] or [id, {\"hex\":...}]" : "[id, value]") +
              " with an id 0-65535";
      return std::nullopt;
    }
    const auto id = static_cast<std::uint16_t>(element[0].get<std::uint64_t>());
    const auto& value = element[1];
    const bool has_size = element.size() == 3;
    if (const auto number =
            value.is_string() ? decimal(value.get_ref<const std::string&>()) : std::nullopt) {
      if (sized && (!has_size || !element[2].is_number_unsigned() ||
                    !fits(element[2].get<std::uint64_t>(), *number))) {
        error = "io has id " + std::to_string(id) +
                " without a size after its value (1, 2, 4 or 8 bytes that hold it)";
        return std::nullopt;
      }
      out.push_back({id, kind_t::integer, value.get<std::string>(),
                     static_cast<std::uint8_t>(sized ? element[2].get<std::uint64_t>() : 0)});
    } else if (value.is_object() && value.size() == 1 && value.contains("hex") &&
               value["hex"].is_string() && hex_bytes(value["hex"].get_ref<const std::string&>())) {
      if (has_size) {
        error = "io has id " + std::to_string(id) + " with a size after bytes, which have none";
        return std::nullopt;
      }
      out.push_back({id, kind_t::bytes, value["hex"].get<std::string>()});
    } else {
      error = "io has id " + std::to_string(id) +
              " with a value that is neither a decimal string nor {\"hex\":...}";
      return std::nullopt;
    }
  }
  return out;
}

std::optional<stored_io> scan_format2(std::string_view text, std::string_view codec) {
  scanner in{text};
  stored_io out;
  if (!in.next('{')) return std::nullopt;
  if (in.next('}')) return in.done() ? std::optional<stored_io>(std::move(out)) : std::nullopt;
  const auto is_alnum = [](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  do {
    if (!in.next('"')) return std::nullopt;
    const auto id = element_id(in.run(is_digit));
    if (!id || !in.next("\":")) return std::nullopt;
    if (in.next('"')) {
      const std::string_view s = in.run(is_alnum);
      if (!in.next('"')) return std::nullopt;
      auto value = format2_string(*id, s, codec);
      if (!value) return std::nullopt;
      out.push_back(std::move(*value));
    } else {
      const std::string_view digits = in.run(is_digit);
      if (!decimal(digits)) return std::nullopt;
      out.push_back({*id, kind_t::integer, std::string(digits)});
    }
  } while (in.next(','));
  if (!in.next('}') || !in.done()) return std::nullopt;
  return out;
}

std::optional<stored_io> parse_format2(std::string_view text, std::string_view codec,
                                       std::string& error) {
  const auto doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "io is not a JSON object";
    return std::nullopt;
  }
  stored_io out;
  for (const auto& [key, value] : doc.items()) {
    const auto id = element_id(key);
    if (!id) {
      error = "io has key '" + key.substr(0, 40) + "', not an IO id";
      return std::nullopt;
    }
    if (value.is_number_unsigned()) {
      out.push_back({*id, kind_t::integer, std::to_string(value.get<std::uint64_t>())});
      continue;
    }
    if (value.is_string()) {
      if (auto v = format2_string(*id, value.get_ref<const std::string&>(), codec)) {
        out.push_back(std::move(*v));
        continue;
      }
    }
    error = "io has id " + key + " with a value that is neither an unsigned integer nor a " +
            "decimal or hex string";
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::uint64_t> stored_io_value::number() const {
  if (kind != kind_t::integer) return std::nullopt;
  return decimal(text);
}

std::optional<stored_io> read_io(std::string_view text, int format, std::string_view codec,
                                 std::string& error) {
  if (format >= 3) {
    const bool sized = format >= 4;
    if (auto fast = scan_format3(text, sized)) return fast;
    return parse_format3(text, sized, error);
  }
  if (auto fast = scan_format2(text, codec)) return fast;
  return parse_format2(text, codec, error);
}

void append_value_text(std::string& out, const stored_io_value& value) {
  if (value.kind == kind_t::bytes) {
    out += R"({"hex":")";
    out += value.text;
    out += "\"}";
  } else {
    out += '"';
    out += value.text;
    out += '"';
  }
}

void append_io_text(std::string& out, const stored_io& values) {
  out += '[';
  for (const stored_io_value& v : values) {
    if (out.back() != '[') out += ',';
    out += '[';
    char digits[8];
    out.append(digits, std::to_chars(digits, digits + sizeof digits, v.id).ptr);
    out += ',';
    append_value_text(out, v);
    if (v.size != 0) {
      out += ',';
      out += static_cast<char>('0' + v.size);
    }
    out += ']';
  }
  out += ']';
}

std::string io_text(const stored_io& values) {
  std::string out;
  append_io_text(out, values);
  return out;
}

nlohmann::ordered_json io_json(const stored_io& values) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const stored_io_value& v : values) {
    nlohmann::ordered_json pair = nlohmann::ordered_json::array();
    pair.push_back(v.id);
    if (v.kind == kind_t::bytes) {
      nlohmann::ordered_json bytes = nlohmann::ordered_json::object();
      bytes["hex"] = v.text;
      pair.push_back(std::move(bytes));
    } else {
      pair.push_back(v.text);
      if (v.size != 0) pair.push_back(v.size);
    }
    out.push_back(std::move(pair));
  }
  return out;
}

}  // namespace tgw::infra::telemetry
