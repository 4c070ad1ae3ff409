// Fuzzes the sink's reading of a telemetry stream entry and the COPY text it makes of
// the row. Input: the entry id, then field names and values, separated by NUL bytes.
// Oracles: an entry is a row or a rejection with a reason, never both or neither; a
// row's binary COPY tuple has 17 fields whose lengths cover it exactly;
// a rejection keeps every field as a JSON object; nothing PostgreSQL refuses (a NUL
// byte or \u0000 in text or jsonb) reaches a column, so no entry can block the sink.
// Formats 3 and 4: a row's io holds exactly the values a general JSON parser reads from
// the entry's io (for a format 3 or 4 entry, a format 4 integer with its wire size,
// which holds it), every value round-trips through the newest text, each of its kind
// (decimal digits within 64 bits, or hex bytes), and io_named is named_io of those
// values.

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "infra/sink/copy_binary.hpp"
#include "infra/sink/telemetry_entry.hpp"
#include "infra/telemetry/named_io.hpp"
#include "infra/telemetry/stored_io.hpp"

namespace {

using namespace tgw::infra::sink;
using tgw::fuzz::require;

const tgw::infra::telemetry::io_dictionary& names() {
  static const auto table = [] {
    std::string error;
    return *tgw::infra::telemetry::io_dictionary::builtin("fmb", error);
  }();
  return table;
}

// No decoded string or key holds NUL: jsonb would refuse the document.
bool storable(const nlohmann::json& j) {
  if (j.is_string()) return j.get_ref<const std::string&>().find('\0') == std::string::npos;
  if (j.is_object())
    for (const auto& [key, value] : j.items())
      if (key.find('\0') != std::string::npos || !storable(value)) return false;
  if (j.is_array())
    for (const auto& value : j)
      if (!storable(value)) return false;
  return true;
}

std::string field_of(const entry_fields& fields, const std::string& name) {
  std::string value;
  for (const auto& [k, v] : fields)
    if (k == name) value = v;  // The last of a repeated name, as the sink reads it.
  return value;
}

bool decimal_within_64_bits(const std::string& s) {
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
  if (s.find_first_not_of("0123456789") != std::string::npos) return false;
  return s.size() < 20 || s <= "18446744073709551615";
}

bool hex_bytes(const std::string& s) {
  return s.size() % 2 == 0 && s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

void check_io(const entry_fields& fields, const position_row& row) {
  namespace t = tgw::infra::telemetry;
  std::string error;
  // The row's io is in the newest form: format 4's, sizes where the entry had them.
  // The format as the sink reads `v` (a row has one it reads, or none: format 1).
  const std::string v = field_of(fields, "v");
  long format = 1;
  if (!v.empty()) std::from_chars(v.data(), v.data() + v.size(), format);
  const auto values = t::read_io(row.io, format >= 4 ? 4 : 3, row.codec.value_or(""), error);
  require(values.has_value());
  for (const auto& value : *values) {
    require(value.kind == t::stored_io_value::kind_t::integer ? decimal_within_64_bits(value.text)
                                                              : hex_bytes(value.text));
    require(value.size == 0 || (format >= 4 && value.kind == t::stored_io_value::kind_t::integer));
  }
  // Round trip: the values' text reads back as the same values.
  const std::string text = t::io_text(*values);
  const auto again = t::read_io(text, format >= 4 ? 4 : 3, "", error);
  require(again.has_value() && *again == *values);
  require(nlohmann::json::parse(text) == nlohmann::json::parse(row.io));
  std::vector<t::io_size_mismatch> mismatches;
  require(t::named_io_text(*values, names(), &mismatches) == row.io_named);
  require(mismatches == row.io_size_mismatches);
  // A format 3 or 4 entry's io: what a general JSON parser reads of it, element by
  // element.
  if (format < 3) return;
  const auto doc = nlohmann::json::parse(field_of(fields, "io"));
  require(doc.is_array() && doc.size() == values->size());
  for (std::size_t i = 0; i < values->size(); ++i) {
    const auto& element = doc[i];
    const auto& value = (*values)[i];
    require(element.is_array() && element[0] == value.id);
    if (value.kind == t::stored_io_value::kind_t::bytes) {
      require(element.size() == 2);
      require(element[1].is_object() && element[1].size() == 1 && element[1]["hex"] == value.text);
    } else {
      require(element[1].is_string() && element[1] == value.text);
      if (format >= 4) {
        require(element.size() == 3 && element[2] == value.size);
        const std::uint64_t n = *value.number();
        require(value.size == 8 || n >> (8 * value.size) == 0);
      } else {
        require(element.size() == 2);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      parts.emplace_back();
    else
      parts.back() += static_cast<char>(data[i]);
  }
  entry_fields fields;
  for (std::size_t i = 1; i + 1 < parts.size(); i += 2) fields.emplace_back(parts[i], parts[i + 1]);

  const auto parsed = parse_entry(parts[0], fields, names());
  if (const auto* rejected = std::get_if<rejected_entry>(&parsed)) {
    require(!rejected->reason.empty());
    require(rejected->reason.find('\0') == std::string::npos);
    require(rejected->stream_id == parts[0]);
    const auto kept = nlohmann::json::parse(rejected->fields, nullptr, false);
    require(kept.is_object() && storable(kept));
    return 0;
  }
  const auto& row = std::get<position_row>(parsed);
  require(row.imei.size() == 15 || row.imei.size() == 16);
  require(nlohmann::json::parse(row.io, nullptr, false).is_array());
  require(nlohmann::json::parse(row.io_named, nullptr, false).is_object());
  for (const std::string* text : {&row.io, &row.io_named, &row.extra})
    require(text->empty() || storable(nlohmann::json::parse(*text)));
  check_io(fields, row);
  // The COPY stream: header, one tuple of 17 fields whose lengths account for every
  // byte, trailer.
  const std::string copy = copy_binary({row});
  std::size_t at = 19;
  const auto be = [&](std::size_t n) {
    require(at + n <= copy.size());
    std::int64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(copy[at++]);
    const int shift = static_cast<int>(64 - 8 * n);
    return (v << shift) >> shift;
  };
  require(be(2) == 17);
  for (int field = 0; field < 17; ++field) {
    const std::int64_t n = be(4);
    require(n >= -1);
    if (n > 0) {
      require(at + static_cast<std::size_t>(n) <= copy.size());
      at += static_cast<std::size_t>(n);
    }
  }
  require(be(2) == -1 && at == copy.size());
  return 0;
}
