#include "infra/telemetry/io_dictionary_file.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

namespace tgw::infra::telemetry {
namespace {

bool snake_case(std::string_view s) {
  if (s.empty() || !(s.front() >= 'a' && s.front() <= 'z')) return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

template <class Number>
std::optional<Number> whole(std::string_view text) {
  Number v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The parts of `s` between `separators`, trimmed, empty ones left out.
std::vector<std::string> split(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const auto cut = s.find_first_of(separators);
    const auto part = trimmed(s.substr(0, cut));
    if (!part.empty()) out.emplace_back(part);
    if (cut == std::string_view::npos) break;
    s.remove_prefix(cut + 1);
  }
  return out;
}

// The element's own fields as text, however the file wrote them; checked in one place
// so that JSON and CSV dictionaries obey the same rules.
struct raw_element {
  std::string id, name, title, families, size, kind, multiplier, unit;
  std::vector<std::pair<std::string, std::string>> errors;
};

std::optional<dictionary_element> checked(const raw_element& r, std::string& why) {
  dictionary_element e;
  const auto id = whole<std::uint32_t>(r.id);
  if (!id || *id > 0xFFFF) {
    why = "id '" + r.id + "' is not 0-65535";
    return std::nullopt;
  }
  e.info.id = static_cast<std::uint16_t>(*id);
  if (!snake_case(r.name)) {
    why = "name '" + r.name + "' is not snake_case (a-z, 0-9, _)";
    return std::nullopt;
  }
  e.info.name = r.name;
  e.info.title = r.title.empty() ? r.name : r.title;
  e.families = split(r.families, "; ,");
  if (e.families.empty()) {
    why = "no model family";
    return std::nullopt;
  }
  const std::string kind = r.kind.empty() ? "unsigned" : r.kind;
  if (kind == "unsigned") {
    e.info.kind = io_value_kind::unsigned_integer;
  } else if (kind == "signed") {
    e.info.kind = io_value_kind::signed_integer;
  } else if (kind == "bytes") {
    e.info.kind = io_value_kind::bytes;
  } else {
    why = "kind '" + kind + "' is not unsigned, signed or bytes";
    return std::nullopt;
  }
  e.info.is_signed = e.info.kind == io_value_kind::signed_integer;
  const auto size = whole<std::uint16_t>(r.size);
  const bool fixed = e.info.kind != io_value_kind::bytes;
  if (!size || (fixed && *size != 1 && *size != 2 && *size != 4 && *size != 8)) {
    why = "size '" + r.size + "' is not " + (fixed ? "1, 2, 4 or 8" : "a byte count");
    return std::nullopt;
  }
  e.info.bytes = *size;
  if (!r.multiplier.empty()) {
    const auto m = whole<double>(r.multiplier);
    if (!m || !std::isfinite(*m) || *m <= 0.0) {
      why = "multiplier '" + r.multiplier + "' is not a positive number";
      return std::nullopt;
    }
    e.info.multiplier = *m;
  }
  e.info.unit = r.unit;
  if (!fixed && !r.errors.empty()) {
    why = "kind bytes has no error codes (an NX value is bytes, never a raw number)";
    return std::nullopt;
  }
  for (const auto& [code, state] : r.errors) {
    const auto raw = whole<std::uint64_t>(code);
    if (!raw) {
      why = "error code '" + code + "' is not a raw value (a decimal integer)";
      return std::nullopt;
    }
    // A code the element's size cannot carry would never match, and says the size or
    // the code is wrong.
    if (e.info.bytes < 8 && *raw >> (8 * e.info.bytes) != 0) {
      why = "error code " + code + " does not fit in " + std::to_string(e.info.bytes) + " byte" +
            (e.info.bytes == 1 ? "" : "s") + " (0-" +
            std::to_string((std::uint64_t{1} << (8 * e.info.bytes)) - 1) + ")";
      return std::nullopt;
    }
    if (!snake_case(state)) {
      why = "error code " + code + " names '" + state + "', not snake_case";
      return std::nullopt;
    }
    e.info.errors.emplace_back(*raw, state);
  }
  std::sort(e.info.errors.begin(), e.info.errors.end());
  return e;
}

std::string text_of(const nlohmann::json& element, const char* key) {
  const auto it = element.find(key);
  if (it == element.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string joined;
    for (const auto& part : *it)
      joined += (part.is_string() ? part.get<std::string>() : part.dump()) + ";";
    return joined;
  }
  return it->dump();
}

// The keys a dictionary's JSON may hold, at the top and in each element: a key of
// neither (a misspelt "mulitplier") would otherwise drop what it was meant to say.
constexpr std::array<std::string_view, 4> top_keys = {"about", "sources", "families", "elements"};
constexpr std::array<std::string_view, 9> element_keys = {
    "id", "name", "title", "families", "size", "kind", "multiplier", "unit", "errors"};

template <std::size_t N>
std::string listed(const std::array<std::string_view, N>& names) {
  std::string out;
  for (const std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

template <std::size_t N>
std::optional<std::string> unknown_key(const nlohmann::json& object,
                                       const std::array<std::string_view, N>& known) {
  for (const auto& [key, unused] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end()) return key;
  return std::nullopt;
}

// "line:column" of the byte at `offset` (0-based) of `text`, both from 1.
std::string position_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const auto line_start = before.rfind('\n');
  const auto column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return std::to_string(line) + ":" + std::to_string(column);
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: ".
std::string syntax_problem(const std::string& what) {
  const auto at = what.find("column ");
  const auto colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

std::optional<std::vector<dictionary_element>> parse_json(std::string_view text,
                                                          std::string_view origin,
                                                          std::string& error) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1 and points past the last byte read: where the text broke off
    // or went wrong.
    error = std::string(origin) + ":" + position_of(text, e.byte == 0 ? 0 : e.byte - 1) +
            ": not valid JSON: " + syntax_problem(e.what());
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("elements") || !doc["elements"].is_array()) {
    error = std::string(origin) + ": not a JSON object with an \"elements\" array";
    return std::nullopt;
  }
  if (const auto key = unknown_key(doc, top_keys)) {
    error = std::string(origin) + ": unknown key '" + *key + "' (keys: " + listed(top_keys) + ")";
    return std::nullopt;
  }
  std::vector<dictionary_element> out;
  std::size_t index = 0;
  for (const auto& element : doc["elements"]) {
    ++index;
    if (!element.is_object()) {
      error = std::string(origin) + ": element " + std::to_string(index) + " is not an object";
      return std::nullopt;
    }
    if (const auto key = unknown_key(element, element_keys)) {
      error = std::string(origin) + ": element " + std::to_string(index) + " (id " +
              text_of(element, "id") + "): unknown key '" + *key +
              "' (keys: " + listed(element_keys) + ")";
      return std::nullopt;
    }
    raw_element r{
        text_of(element, "id"),         text_of(element, "name"), text_of(element, "title"),
        text_of(element, "families"),   text_of(element, "size"), text_of(element, "kind"),
        text_of(element, "multiplier"), text_of(element, "unit"), {}};
    if (const auto errors = element.find("errors"); errors != element.end()) {
      if (!errors->is_object()) {
        error = std::string(origin) + ": element " + std::to_string(index) +
                ": errors is not an object of raw value -> state";
        return std::nullopt;
      }
      for (const auto& [code, state] : errors->items())
        r.errors.emplace_back(code, state.is_string() ? state.get<std::string>() : state.dump());
    }
    std::string why;
    auto e = checked(r, why);
    if (!e) {
      error =
          std::string(origin) + ": element " + std::to_string(index) + " (id " + r.id + "): " + why;
      return std::nullopt;
    }
    out.push_back(std::move(*e));
  }
  return out;
}

// One CSV line's fields; double quotes group a field and "" is a quote inside one.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  for (auto& f : out) f = std::string(trimmed(f));
  return out;
}

std::optional<std::vector<dictionary_element>> parse_csv(std::string_view text,
                                                         std::string_view origin,
                                                         std::string& error) {
  std::vector<std::string> header;
  std::vector<dictionary_element> out;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto cut = text.find('\n');
    const std::string_view line = trimmed(text.substr(0, cut));
    text.remove_prefix(cut == std::string_view::npos ? text.size() : cut + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    auto fields = csv_fields(line);
    const auto where = std::string(origin) + ":" + std::to_string(line_number);
    if (header.empty()) {
      header = std::move(fields);
      for (const char* required : {"id", "name", "families", "size"})
        if (std::find(header.begin(), header.end(), required) == header.end()) {
          error = where + ": the header has no column '" + required +
                  "' (columns: " + listed(element_keys) + ")";
          return std::nullopt;
        }
      for (const std::string& column : header)
        if (std::find(element_keys.begin(), element_keys.end(), column) == element_keys.end()) {
          error = where + ": unknown column '";
          error.append(column).append("' (columns: ").append(listed(element_keys)).append(")");
          return std::nullopt;
        }
      continue;
    }
    if (fields.size() != header.size()) {
      error = where + ": " + std::to_string(fields.size()) + " fields, the header has " +
              std::to_string(header.size());
      return std::nullopt;
    }
    std::map<std::string, std::string> by_name;
    for (std::size_t i = 0; i < header.size(); ++i) by_name[header[i]] = fields[i];
    raw_element r{by_name["id"],         by_name["name"], by_name["title"],
                  by_name["families"],   by_name["size"], by_name["kind"],
                  by_name["multiplier"], by_name["unit"], {}};
    // errors: "850=sensor_not_ready;3000=not_connected".
    for (const std::string& pair : split(by_name["errors"], ";")) {
      const auto eq = pair.find('=');
      if (eq == std::string::npos) {
        error = where + ": errors '" + pair + "' is not <raw value>=<state>";
        return std::nullopt;
      }
      r.errors.emplace_back(std::string(trimmed(std::string_view(pair).substr(0, eq))),
                            std::string(trimmed(std::string_view(pair).substr(eq + 1))));
    }
    std::string why;
    auto e = checked(r, why);
    if (!e) {
      error = where + ": " + why;
      return std::nullopt;
    }
    out.push_back(std::move(*e));
  }
  if (header.empty()) {
    error = std::string(origin) + ": no header line";
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::vector<dictionary_element>> parse_dictionary(std::string_view text,
                                                                std::string_view origin,
                                                                std::string& error) {
  // Spreadsheets save CSV as "UTF-8 with BOM": the mark is no part of the text.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return parse_json(text, origin, error);
  return parse_csv(text, origin, error);
}

std::optional<std::string> read_dictionary_file(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path;
    return std::nullopt;
  }
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace tgw::infra::telemetry
