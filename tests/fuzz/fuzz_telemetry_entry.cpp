// Fuzzes the sink's reading of a telemetry stream entry and the COPY text it makes of
// the row. Input: the entry id, then field names and values, separated by NUL bytes.
// Oracles: an entry is a row or a rejection with a reason, never both or neither; a
// row's binary COPY tuple has 17 fields whose lengths cover it exactly;
// a rejection keeps every field as a JSON object; nothing PostgreSQL refuses (a NUL
// byte or \u0000 in text or jsonb) reaches a column, so no entry can block the sink.

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "infra/sink/copy_binary.hpp"
#include "infra/sink/telemetry_entry.hpp"
#include "infra/telemetry/named_io.hpp"

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
  require(nlohmann::json::parse(row.io, nullptr, false).is_object());
  require(nlohmann::json::parse(row.io_named, nullptr, false).is_object());
  for (const std::string* text : {&row.io, &row.io_named, &row.extra})
    require(text->empty() || storable(nlohmann::json::parse(*text)));
  // io_named is what the general JSON parser and named_io make of io, whichever way
  // the row was made.
  const auto io = nlohmann::ordered_json::parse(row.io, nullptr, false);
  require(!io.is_discarded());
  require(nlohmann::json::parse(tgw::infra::telemetry::named_io(io, names()).dump()) ==
          nlohmann::json::parse(row.io_named));
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
