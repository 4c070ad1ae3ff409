// The telemetry entry has one definition, entry_schema: the persist Function writes its
// fields, docs/TELEMETRY.md's table documents them, and the sink reads them. This test
// holds the three equal, so none can drift from the others.
#include "infra/telemetry/entry_schema.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "actors/ports/telemetry_store.hpp"
#include "infra/telemetry/gateway_library.hpp"

namespace tgw::infra::telemetry {
namespace {

std::vector<std::string> schema_names() {
  std::vector<std::string> out;
  for (const auto& f : entry_schema) out.emplace_back(f.name);
  return out;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The field names of the first column of the table under "## The entry".
std::vector<std::string> documented_fields() {
  const std::string doc = read(std::string(TGW_SOURCE_DIR) + "/docs/TELEMETRY.md");
  const auto start = doc.find("\n## The entry\n");
  EXPECT_NE(start, std::string::npos);
  const auto end = doc.find("\n## ", start + 1);
  std::istringstream section(doc.substr(start, end - start));
  std::vector<std::string> out;
  const std::regex name("`([a-z]+)`");
  for (std::string line; std::getline(section, line);) {
    if (!line.starts_with("| `")) continue;
    const std::string first = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator it(first.begin(), first.end(), name), done; it != done; ++it)
      out.push_back((*it)[1]);
  }
  return out;
}

// The fields of the persist Function's XADDs to the telemetry stream, in order, and
// the format version it writes.
std::vector<std::string> written_fields(std::string& version) {
  const std::string lua(gateway_library_source());
  std::vector<std::string> previous;
  std::size_t at = 0;
  int calls = 0;
  while ((at = lua.find("redis.call('XADD', ctx.stream", at)) != std::string::npos) {
    const auto end = lua.find(")\n", at);
    std::string call = lua.substr(at, end - at);
    call = call.substr(call.find("'*'") + 3);
    std::vector<std::string> names;
    const std::regex field("'([a-z]+)',");
    for (std::sregex_iterator it(call.begin(), call.end(), field), done; it != done; ++it)
      names.push_back((*it)[1]);
    std::smatch v;
    EXPECT_TRUE(std::regex_search(call, v, std::regex("'v', '([0-9]+)'")));
    version = v[1];
    if (calls++ > 0) {
      EXPECT_EQ(names, previous) << "the two XADDs write different fields";
    }
    previous = names;
    at = end;
  }
  EXPECT_EQ(calls, 2);
  return previous;
}

TEST(EntrySchema, TheFunctionWritesTheSchemasFieldsInOrder) {
  std::string version;
  EXPECT_EQ(written_fields(version), schema_names());
  EXPECT_EQ(version, ports::telemetry_format_version);
  EXPECT_EQ(version, std::to_string(newest_entry_format));
}

TEST(EntrySchema, TheDocumentedTableNamesEveryFieldOnce) {
  const auto documented = documented_fields();
  const auto defined = schema_names();
  EXPECT_EQ(std::multiset<std::string>(documented.begin(), documented.end()),
            std::multiset<std::string>(defined.begin(), defined.end()));
}

}  // namespace
}  // namespace tgw::infra::telemetry
