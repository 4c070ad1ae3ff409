#include "infra/sink/telemetry_entry.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "infra/telemetry/named_io.hpp"

namespace tgw::infra::sink {
namespace {

struct field_rule {
  std::string_view name;
  bool required_since_v2;  // Format 1 entries lack v, codec and gen.
};

// Every field the entry format defines; any other is kept in `extra`.
constexpr std::array<field_rule, 14> known_fields{{
    {"v", true},
    {"imei", false},
    {"codec", true},
    {"ts", false},
    {"pri", false},
    {"lon", false},
    {"lat", false},
    {"alt", false},
    {"ang", false},
    {"sat", false},
    {"spd", false},
    {"evt", false},
    {"io", false},
    {"gen", true},
}};

// The index of a known field in known_fields, or -1.
int slot_of(std::string_view name) {
  for (std::size_t i = 0; i < known_fields.size(); ++i)
    if (known_fields[i].name == name) return static_cast<int>(i);
  return -1;
}

bool known(std::string_view name) {
  return slot_of(name) >= 0;
}

// The entry's fields by slot, found in one pass over them; the last of a repeated name.
struct field_index {
  std::array<const std::string*, known_fields.size()> at{};
  bool unknown = false;

  explicit field_index(const entry_fields& fields) {
    for (const auto& [key, value] : fields) {
      const int slot = slot_of(key);
      if (slot < 0)
        unknown = true;
      else
        at[static_cast<std::size_t>(slot)] = &value;
    }
  }
  [[nodiscard]] const std::string* operator[](std::string_view name) const {
    const int slot = slot_of(name);
    return slot < 0 ? nullptr : at[static_cast<std::size_t>(slot)];
  }
};

std::optional<std::int64_t> integer(std::string_view text) {
  std::int64_t v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc{} || ptr != end || text.empty()) return std::nullopt;
  return v;
}

bool digits_only(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// PostgreSQL's text and jsonb refuse NUL (jsonb also its escape \u0000): a NUL byte
// becomes U+FFFD, so that a rejected entry is always storable.
std::string without_nul(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\0')
      out += "\xEF\xBF\xBD";
    else
      out += c;
  }
  return out;
}

std::string fields_json(const entry_fields& fields) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, value] : fields) j[without_nul(key)] = without_nul(value);
  // Invalid UTF-8 is replaced too: jsonb takes UTF-8 only.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A value quoted in a reason: printable ASCII, others as \xNN, at most 40 bytes shown.
std::string shown(std::string_view value) {
  std::string out;
  for (const char c : value.substr(0, 40)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\\') {
      out += c;
    } else {
      constexpr const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xF];
    }
  }
  if (value.size() > 40) out += "...";
  return out;
}

// True when a decoded string of the io object holds NUL, which jsonb refuses (as the
// escape \u0000; a NUL byte itself is no valid JSON).
bool holds_nul(const nlohmann::ordered_json& io) {
  for (const auto& [key, value] : io.items())
    if (value.is_string() && value.get_ref<const std::string&>().find('\0') != std::string::npos)
      return true;
  return false;
}

// The io object in the one form the gateway writes it: {"<id>":<integer or
// "<letters and digits>">,...}, no whitespace. Its named form is made as it is scanned,
// an order of magnitude faster than a general JSON parser and a DOM; nullopt for any
// other text, which then goes to the general parser (the fuzzer holds the two equal).
std::optional<std::string> named_flat_io(std::string_view json,
                                         const telemetry::io_dictionary& names) {
  std::string named = "{";
  std::size_t at = 0;
  const auto next = [&](char c) {
    if (at < json.size() && json[at] == c) {
      ++at;
      return true;
    }
    return false;
  };
  const auto run = [&](auto accept) {
    const std::size_t from = at;
    while (at < json.size() && accept(json[at])) ++at;
    return json.substr(from, at - from);
  };
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto is_alnum = [&](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  if (!next('{')) return std::nullopt;
  if (next('}')) return at == json.size() ? std::optional<std::string>("{}") : std::nullopt;
  do {
    if (!next('"')) return std::nullopt;
    const std::string_view key = run(is_digit);
    if (key.empty() || !next('"') || !next(':')) return std::nullopt;
    std::uint32_t id = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc{} || end != key.data() + key.size() || id > 65535) return std::nullopt;
    bool quoted = false;
    std::string_view value;
    if (next('"')) {
      quoted = true;
      value = run(is_alnum);
      if (!next('"')) return std::nullopt;
    } else {
      const std::size_t from = at;
      (void)next('-');
      if (run(is_digit).empty()) return std::nullopt;
      value = json.substr(from, at - from);
      // JSON has no leading zeros (and -0 is a float to some parsers): leave those to
      // the general parser.
      const std::string_view digits = value.front() == '-' ? value.substr(1) : value;
      if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
      if (value == "-0") return std::nullopt;
      // Beyond 64 bits a general parser makes it a float: not an IO value.
      std::int64_t signed_value = 0;
      std::uint64_t unsigned_value = 0;
      const char* last = value.data() + value.size();
      if (value.front() == '-'
              ? std::from_chars(value.data(), last, signed_value).ec != std::errc{}
              : std::from_chars(value.data(), last, unsigned_value).ec != std::errc{})
        return std::nullopt;
    }
    const auto* info = names.find(static_cast<std::uint16_t>(id));
    if (info == nullptr) continue;
    if (named.size() > 1) named += ',';
    named += '"';
    named += info->name;
    named += "\":";
    // The raw value as an unsigned integer, when it is one (a decimal string too).
    std::uint64_t raw = 0;
    bool unsigned_value = false;
    if (value.front() != '-' && (!quoted || digits_only(value))) {
      const auto [e, err] = std::from_chars(value.data(), value.data() + value.size(), raw);
      unsigned_value = err == std::errc{} && e == value.data() + value.size();
    }
    if (!unsigned_value || (info->multiplier == 1.0 && !info->is_signed)) {
      if (quoted) named += '"';
      named += value;
      if (quoted) named += '"';
      continue;
    }
    char buf[32];
    const auto [e, err] = std::to_chars(buf, buf + sizeof buf, info->scaled(raw, info->bytes));
    named.append(buf, e);
  } while (next(','));
  if (!next('}') || at != json.size()) return std::nullopt;
  named += '}';
  return named;
}

}  // namespace

std::optional<std::int64_t> entry_id_ms(const std::string& stream_id) {
  const auto dash = stream_id.find('-');
  if (dash == std::string::npos) return std::nullopt;
  const std::string_view ms(stream_id.data(), dash);
  const std::string_view seq(stream_id.data() + dash + 1, stream_id.size() - dash - 1);
  if (!digits_only(ms) || !digits_only(seq)) return std::nullopt;
  return integer(ms);
}

std::variant<position_row, rejected_entry> parse_entry(const std::string& stream_id,
                                                       const entry_fields& fields,
                                                       const telemetry::io_dictionary& names) {
  const auto reject = [&](std::string reason) {
    return rejected_entry{stream_id, fields_json(fields), std::move(reason)};
  };
  const field_index field(fields);
  position_row row;
  row.stream_id = stream_id;
  const auto stored = entry_id_ms(stream_id);
  if (!stored) return reject("entry id '" + shown(stream_id) + "' is not <ms>-<seq>");
  row.stored_ms = *stored;

  int format = 1;
  if (const auto* v = field["v"]) {
    const auto parsed = integer(*v);
    if (!parsed || *parsed < 1)
      return reject("field v '" + shown(*v) + "' is not a format version");
    if (*parsed > newest_entry_format)
      return reject("entry format v=" + shown(*v) + " is newer than this sink reads (v=" +
                    std::to_string(newest_entry_format) + "); upgrade tgw sink");
    format = static_cast<int>(*parsed);
  }
  for (const auto& rule : known_fields) {
    if (rule.name == "gen") continue;  // Empty or absent unless Codec 16.
    if (rule.required_since_v2 && format < 2) continue;
    if (field[rule.name] == nullptr)
      return reject("field " + std::string(rule.name) + " is missing");
  }

  const std::string& imei = *field["imei"];
  if (!digits_only(imei) || imei.size() < 15 || imei.size() > 16)
    return reject("field imei '" + shown(imei) + "' is not 15 or 16 digits");
  row.imei = imei;
  if (format >= 2) {
    const std::string& codec = *field["codec"];
    if (codec != "8" && codec != "8E" && codec != "16")
      return reject("field codec '" + shown(codec) + "' is not 8, 8E or 16");
    row.codec = codec;
  }

  // Each numeric field within the range its wire field can hold, so the column never
  // overflows and a corrupted entry is caught here rather than stored.
  struct bound {
    const char* name;
    std::int64_t min;
    std::int64_t max;
  };
  constexpr std::int64_t i32 = std::numeric_limits<std::int32_t>::max();
  constexpr std::array<bound, 9> bounds{{
      {"ts", 0, 253402300799999},  // Through 9999-12-31, as timestamptz prints.
      {"pri", 0, 255},
      {"lon", -i32 - 1, i32},
      {"lat", -i32 - 1, i32},
      {"alt", -32768, 65535},
      {"ang", 0, 65535},
      {"sat", 0, 255},
      {"spd", 0, 65535},
      {"evt", 0, 65535},
  }};
  std::array<std::int64_t, bounds.size()> values{};
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const std::string& text = *field[bounds[i].name];
    const auto v = integer(text);
    if (!v)
      return reject(std::string("field ") + bounds[i].name + " '" + shown(text) +
                    "' is not an integer");
    if (*v < bounds[i].min || *v > bounds[i].max)
      return reject(std::string("field ") + bounds[i].name + " " + text + " is out of range [" +
                    std::to_string(bounds[i].min) + ", " + std::to_string(bounds[i].max) + "]");
    values[i] = *v;
  }
  row.ts_ms = values[0];
  row.priority = static_cast<std::int32_t>(values[1]);
  row.longitude_e7 = values[2];
  row.latitude_e7 = values[3];
  row.altitude = static_cast<std::int32_t>(values[4]);
  row.angle = static_cast<std::int32_t>(values[5]);
  row.satellites = static_cast<std::int32_t>(values[6]);
  row.speed = static_cast<std::int32_t>(values[7]);
  row.event_io = static_cast<std::int32_t>(values[8]);

  if (const auto* gen = field["gen"]; gen != nullptr && !gen->empty()) {
    const auto v = integer(*gen);
    if (!v || *v < 0 || *v > 255) return reject("field gen '" + shown(*gen) + "' is not 0-255");
    row.generation = static_cast<std::int32_t>(*v);
  }

  const std::string& io_text = *field["io"];
  if (auto named = named_flat_io(io_text, names)) {
    row.io = io_text;  // Valid JSON as it is: no need to write it again.
    row.io_named = std::move(*named);
  } else {
    // Not the flat form the gateway writes: the general parser decides.
    const auto io = nlohmann::ordered_json::parse(io_text, nullptr, false);
    if (io.is_discarded() || !io.is_object()) return reject("field io is not a JSON object");
    for (const auto& [key, value] : io.items()) {
      const auto id = integer(key);
      if (!id || *id < 0 || *id > 65535 || !digits_only(key))
        return reject("field io has key '" + shown(key) + "', not an IO id");
      if (!value.is_number_integer() && !value.is_string())
        return reject("field io has id " + key +
                      " with a value that is neither integer nor string");
    }
    if (holds_nul(io)) return reject("field io holds \\u0000, which jsonb refuses");
    row.io = io_text;
    row.io_named = telemetry::named_io(io, names).dump();
  }

  if (field.unknown) {
    entry_fields unknown;
    for (const auto& [key, value] : fields)
      if (!known(key)) unknown.emplace_back(key, value);
    row.extra = fields_json(unknown);
  }
  return row;
}

}  // namespace tgw::infra::sink
