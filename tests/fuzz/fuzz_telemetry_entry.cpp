// Fuzzes the sink's reading of a telemetry stream entry and the COPY text it makes of
// the row. Input: the entry id, then field names and values, separated by NUL bytes.
// Oracles: an entry is a row or a rejection with a reason, never both or neither; a
// row's text is one line of exactly 17 tab-separated columns whatever its values hold;
// a rejection keeps every field as a JSON object; nothing PostgreSQL refuses (a NUL
// byte or \u0000 in text or jsonb) reaches a column, so no entry can block the sink.

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "infra/sink/copy_text.hpp"
#include "infra/sink/telemetry_entry.hpp"

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
    require(rejected->fields.find("\\u0000") == std::string::npos);
    require(rejected->stream_id == parts[0]);
    const auto kept = nlohmann::json::parse(rejected->fields, nullptr, false);
    require(kept.is_object());
    return 0;
  }
  const auto& row = std::get<position_row>(parsed);
  require(row.imei.size() == 15 || row.imei.size() == 16);
  require(nlohmann::json::parse(row.io, nullptr, false).is_object());
  require(nlohmann::json::parse(row.io_named, nullptr, false).is_object());
  for (const std::string* text : {&row.io, &row.io_named, &row.extra})
    require(text->find("\\u0000") == std::string::npos && text->find('\0') == std::string::npos);
  const std::string line = copy_text({row});
  require(!line.empty() && line.back() == '\n');
  std::size_t tabs = 0;
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    require(line[i] != '\n' && line[i] != '\r');
    tabs += line[i] == '\t' ? 1 : 0;
  }
  require(tabs == 16);
  return 0;
}
