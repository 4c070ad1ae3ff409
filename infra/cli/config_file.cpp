#include "infra/cli/config_file.hpp"

#include <charconv>
#include <istream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include <toml++/toml.h>

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

std::string dotted(const std::vector<std::string>& parents, const std::string& key = {}) {
  std::string out = CLI::detail::join(parents, ".");
  if (!key.empty()) out += (out.empty() ? "" : ".") + key;
  return out;
}

std::string line_of(const toml::node& node) {
  return std::to_string(node.source().begin.line);
}

// A scalar TOML value as the text CLI11 converts to the option's type.
std::optional<std::string> scalar_text(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* b = node.as_boolean()) return std::string(b->get() ? "true" : "false");
  if (const auto* f = node.as_floating_point()) {
    char buffer[32];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, f->get());
    if (ec == std::errc()) return std::string(buffer, end);
    return std::nullopt;
  }
  std::ostringstream text;
  if (const auto* d = node.as_date()) text << d->get();
  if (const auto* t = node.as_time()) text << t->get();
  if (const auto* dt = node.as_date_time()) text << dt->get();
  if (!text.str().empty()) return text.str();
  return std::nullopt;
}

// Every setting of `table` as CLI11's items, sections (tables) by their path.
void flatten(const toml::table& table, std::vector<std::string>& parents, const std::string& file,
             std::vector<CLI::ConfigItem>& out) {
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    if (const auto* section = node.as_table()) {
      parents.push_back(name);
      flatten(*section, parents, file, out);
      parents.pop_back();
      continue;
    }
    CLI::ConfigItem item;
    item.parents = parents;
    item.name = name;
    if (const auto* array = node.as_array()) {
      for (const toml::node& element : *array) {
        auto text = scalar_text(element);
        if (!text)
          throw CLI::ConfigError(file + ":" + line_of(element) + ": '" + dotted(parents, name) +
                                 "' holds a table or an array: a setting takes a value or a "
                                 "list of values");
        item.inputs.push_back(std::move(*text));
      }
    } else if (auto text = scalar_text(node)) {
      item.inputs.push_back(std::move(*text));
    }
    out.push_back(std::move(item));
  }
}

}  // namespace

std::vector<CLI::ConfigItem> config_file::from_config(std::istream& input) const {
  const std::string file = app_.get_config_ptr() != nullptr && app_.get_config_ptr()->count() > 0
                               ? app_.get_config_ptr()->as<std::string>()
                               : std::string("the config file");
  std::stringstream text;
  text << input.rdbuf();
  // TOML as the specification has it (toml++): a value that is not TOML (an unquoted
  // URL, an unclosed section) is an error naming its line and column, never a guess.
  toml::table document;
  try {
    document = toml::parse(text.str(), file);
  } catch (const toml::parse_error& e) {
    throw CLI::ConfigError(file + ":" + std::to_string(e.source().begin.line) + ":" +
                           std::to_string(e.source().begin.column) + ": " +
                           std::string(e.description()));
  }
  std::vector<CLI::ConfigItem> settings;
  std::vector<std::string> parents;
  flatten(document, parents, file, settings);
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
  for (CLI::ConfigItem& item : settings) {
    if (!item.parents.empty()) {
      const CLI::App* owner = section_app(app_, item.parents);
      if (owner == nullptr)
        throw CLI::ConfigError("unknown section [" + dotted(item.parents) + "] in " + file);
      if (!has_option(*owner, item.name))
        throw CLI::ConfigError("unknown key '" + item.name + "' in section [" +
                               dotted(item.parents) + "] of " + file);
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
