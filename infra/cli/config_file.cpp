#include "infra/cli/config_file.hpp"

#include <istream>
#include <memory>
#include <sstream>
#include <string>

namespace tgw::infra {
namespace {

bool has_option(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& long_name : opt->get_lnames())
      if (long_name == name && opt->get_configurable()) return true;
  return false;
}

bool known_anywhere(const CLI::App& app, const std::string& name) {
  if (has_option(app, name)) return true;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (known_anywhere(*sub, name)) return true;
  return false;
}

// The subcommand a section names ("serve", "command.send"), or null.
const CLI::App* section_app(const CLI::App& root, const std::vector<std::string>& parents) {
  const CLI::App* at = &root;
  for (const std::string& name : parents) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : at->get_subcommands({}))
      if (sub->get_name() == name) next = sub;
    if (next == nullptr) return nullptr;
    at = next;
  }
  return at;
}

}  // namespace

std::string config_syntax_problem(const std::string& text) {
  std::istringstream in(text);
  std::size_t number = 0;
  int open_brackets = 0;        // inside a value's array that spans lines
  bool in_long_string = false;  // inside a """ string that spans lines
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (open_brackets > 0 || in_long_string) {
      for (const char c : line) open_brackets += c == '[' ? 1 : c == ']' ? -1 : 0;
      if (in_long_string && line.find("\"\"\"") != std::string::npos) in_long_string = false;
      continue;
    }
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#' || line[first] == ';') continue;
    std::string body = line.substr(first);
    while (!body.empty() && (body.back() == ' ' || body.back() == '\t' || body.back() == '\r'))
      body.pop_back();
    const std::string where = std::to_string(number) + ": ";
    if (body.front() == '[') {
      // [section] or [[section]], optionally followed by a comment.
      const auto close = body.find(']');
      if (close == std::string::npos)
        return where + "'" + body + "' opens a section that is not closed (write [" +
               body.substr(body.find_first_not_of('[')) + "])";
      const auto after = body.find_first_not_of("] \t", close);
      if (after != std::string::npos && body[after] != '#')
        return where + "'" + body + "': nothing may follow a section's ] but a # comment";
      if (body.find_first_not_of("[] \t") == std::string::npos)
        return where + "'" + body + "': a section needs a name";
      continue;
    }
    const auto equals = body.find('=');
    if (equals == std::string::npos || equals == 0)
      return where + "'" + body + "' is not key = value, a [section] or a # comment";
    const std::string value = body.substr(equals + 1);
    if (value.find_first_not_of(" \t") != std::string::npos &&
        value[value.find_first_not_of(" \t")] == '[')
      for (const char c : value) open_brackets += c == '[' ? 1 : c == ']' ? -1 : 0;
    std::size_t quotes = 0;
    for (auto at = value.find("\"\"\""); at != std::string::npos; at = value.find("\"\"\"", at + 3))
      ++quotes;
    in_long_string = quotes % 2 == 1;
  }
  return {};
}

std::vector<CLI::ConfigItem> config_file::from_config(std::istream& input) const {
  const std::string file = app_.get_config_ptr() != nullptr && app_.get_config_ptr()->count() > 0
                               ? app_.get_config_ptr()->as<std::string>()
                               : std::string("the config file");
  // CLI11 reads what it cannot parse as a key (an unclosed "[serve" becomes the key
  // "[serve"): the lines are checked first, so that the error names the line and what
  // is wrong with it.
  std::stringstream text;
  text << input.rdbuf();
  if (const std::string problem = config_syntax_problem(text.str()); !problem.empty())
    throw CLI::ConfigError(file + ":" + problem);
  // The subcommands that run, outermost first, with their section paths.
  std::vector<std::pair<const CLI::App*, std::vector<std::string>>> running;
  std::vector<std::string> path;
  for (const CLI::App* at = &app_;;) {
    const auto chosen = at->get_subcommands();
    if (chosen.empty()) break;
    at = chosen.front();
    path.push_back(at->get_name());
    running.emplace_back(at, path);
  }
  std::vector<CLI::ConfigItem> sections;
  std::vector<CLI::ConfigItem> top_level;
  for (CLI::ConfigItem& item : CLI::ConfigBase::from_config(text)) {
    if (item.name == "++" || item.name == "--") {
      sections.push_back(std::move(item));
      continue;
    }
    if (!item.parents.empty()) {
      const CLI::App* owner = section_app(app_, item.parents);
      if (owner == nullptr)
        throw CLI::ConfigError("unknown section [" + CLI::detail::join(item.parents, ".") +
                               "] in " + file);
      if (!has_option(*owner, item.name))
        throw CLI::ConfigError("unknown key '" + item.name + "' in section [" +
                               CLI::detail::join(item.parents, ".") + "] of " + file);
      sections.push_back(std::move(item));
      continue;
    }
    if (!known_anywhere(app_, item.name))
      throw CLI::ConfigError("unknown key '" + item.name + "' in " + file);
    // A key meant for other subcommands than the one running is no error: one file
    // serves every subcommand.
    for (const auto& [sub, sub_path] : running) {
      if (!has_option(*sub, item.name)) continue;
      CLI::ConfigItem copy = item;
      copy.parents = sub_path;
      top_level.push_back(std::move(copy));
    }
  }
  // The first value an option gets is the one it keeps: sections before the top level.
  sections.insert(sections.end(), top_level.begin(), top_level.end());
  return sections;
}

void add_config_option(CLI::App& app) {
  app.set_config("--config", "",
                 "Read settings from this TOML file: top-level keys apply to every subcommand "
                 "that has them, a [serve] (or [command.send], ...) section to that one only "
                 "and wins; keys are the long flag names; unknown keys are errors "
                 "(docs/OPERATIONS.md)")
      ->envname("TGW_CONFIG");
  app.config_formatter(std::make_shared<config_file>(app));
}

}  // namespace tgw::infra
