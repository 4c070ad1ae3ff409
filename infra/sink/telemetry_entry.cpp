#include "infra/sink/telemetry_entry.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "infra/telemetry/entry_schema.hpp"
#include "infra/telemetry/named_io.hpp"
#include "infra/telemetry/stored_io.hpp"
#include "infra/text/human_time.hpp"

namespace tgw::infra::sink {
namespace {

using telemetry::entry_schema;

// The index of a known field in known_fields, or -1.
int slot_of(std::string_view name) {
  for (std::size_t i = 0; i < entry_schema.size(); ++i)
    if (entry_schema[i].name == name) return static_cast<int>(i);
  return -1;
}

bool known(std::string_view name) {
  return slot_of(name) >= 0;
}

// The entry's fields by slot, found in one pass over them; the last of a repeated name.
struct field_index {
  std::array<const std::string*, entry_schema.size()> at{};
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

}  // namespace

std::optional<std::int64_t> entry_id_ms(const std::string& stream_id) {
  const auto dash = stream_id.find('-');
  if (dash == std::string::npos) return std::nullopt;
  const std::string_view ms(stream_id.data(), dash);
  const std::string_view seq(stream_id.data() + dash + 1, stream_id.size() - dash - 1);
  if (!digits_only(ms) || !digits_only(seq)) return std::nullopt;
  return integer(ms);
}

rejected_entry reject_entry(const std::string& stream_id, const entry_fields& fields,
                            std::string reason) {
  return rejected_entry{stream_id, fields_json(fields), std::move(reason)};
}

std::optional<std::string> outside_window(const position_row& row, const record_window& window) {
  constexpr std::int64_t day_ms = 86'400'000;
  const std::int64_t before = row.stored_ms - row.ts_ms;
  const bool old = before > window.max_age_days * day_ms;
  const bool ahead = -before > window.max_ahead_days * day_ms;
  if (!old && !ahead) return std::nullopt;
  const std::int64_t days = (old ? before : -before) / day_ms;
  return "field ts " + std::to_string(row.ts_ms) + " (" + utc_time(row.ts_ms) + ") is " +
         std::to_string(days) + (days == 1 ? " day " : " days ") + (old ? "before" : "after") +
         " the gateway stored it (" + utc_time(row.stored_ms) + "): outside the plausible " +
         "window (" +
         (old ? "--max-record-age-days " + std::to_string(window.max_age_days)
              : "--max-record-ahead-days " + std::to_string(window.max_ahead_days)) +
         ")";
}

std::variant<position_row, rejected_entry> parse_entry(const std::string& stream_id,
                                                       const entry_fields& fields,
                                                       const telemetry::io_dictionary& names) {
  const auto reject = [&](std::string reason) {
    return reject_entry(stream_id, fields, std::move(reason));
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
  for (const auto& rule : entry_schema) {
    if (!rule.always) continue;  // gen: empty or absent unless Codec 16.
    if (rule.since_format > format) continue;
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
    // Digits beyond 64 signed bits are an integer still, out of every column's range
    // (a device clock past 2^63 ms).
    const bool huge = !v && digits_only(text.starts_with('-') ? text.substr(1) : text);
    if (!v && !huge)
      return reject(std::string("field ") + bounds[i].name + " '" + shown(text) +
                    "' is not an integer");
    if (huge || *v < bounds[i].min || *v > bounds[i].max)
      return reject(std::string("field ") + bounds[i].name + " " + shown(text) +
                    " is out of range [" + std::to_string(bounds[i].min) + ", " +
                    std::to_string(bounds[i].max) + "]");
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

  // io is read by its format's rules and stored in the format 4 form whatever the
  // entry's format, so the column has one shape and every value its kind (an older
  // entry's integers without their wire sizes, which it did not record).
  const std::string& io_text = *field["io"];
  std::string why;
  const auto io = telemetry::read_io(io_text, format, row.codec.value_or(""), why);
  if (!io) return reject("field " + why);
  // Format 3 and 4 text that read_io accepted is valid JSON with no NUL in it, the
  // format 4 form already (format 3's is format 4's without sizes): kept as is.
  row.io = format >= 3 ? io_text : telemetry::io_text(*io);
  row.io_named = telemetry::named_io_text(*io, names, &row.io_size_mismatches);

  if (field.unknown) {
    entry_fields unknown;
    for (const auto& [key, value] : fields)
      if (!known(key)) unknown.emplace_back(key, value);
    row.extra = fields_json(unknown);
  }
  return row;
}

}  // namespace tgw::infra::sink
