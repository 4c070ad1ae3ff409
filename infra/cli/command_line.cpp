#include "infra/cli/command_line.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include <CLI/CLI.hpp>

namespace tgw::infra {
namespace {

// Options of the top-level app that take a value (the word after them is no subcommand).
bool takes_value(const CLI::App& app, const std::string& word) {
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& name : opt->get_lnames())
      // A flag's type size is 1 too (it may be given `=value`); what it expects is 0.
      if (word == "--" + name) return opt->get_items_expected_min() > 0;
  return false;
}

// Where `app`'s subcommand is in `args`, looking from `from` on; npos if none.
std::size_t subcommand_at(const CLI::App& app, const std::vector<std::string>& args,
                          std::size_t from = 1) {
  for (std::size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return std::string::npos;
    if (a.starts_with("-")) {
      if (a.find('=') == std::string::npos && takes_value(app, a)) ++i;
      continue;
    }
    return i;
  }
  return std::string::npos;
}

const CLI::App* subcommand_named(const CLI::App& app, const std::string& word) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == word) return sub;
  return nullptr;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The type name CLI11 gives option `--name` in the subcommand that was parsed (or any).
std::string type_of(const CLI::App& app, const std::string& name) {
  std::vector<const CLI::App*> apps = {&app};
  for (std::size_t i = 0; i < apps.size(); ++i)
    for (const CLI::App* sub : apps[i]->get_subcommands({})) apps.push_back(sub);
  std::string found;
  for (const CLI::App* a : apps)
    for (const CLI::Option* opt : a->get_options())
      for (const std::string& long_name : opt->get_lnames())
        if (long_name == name && (found.empty() || a->parsed())) found = opt->get_type_name();
  return found;
}

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  (void)std::strtod(text.c_str(), &end);
  return end != nullptr && *end == '\0';
}

}  // namespace

std::vector<std::string> config_option_first(const CLI::App& app, std::vector<std::string> args) {
  const std::size_t sub = subcommand_at(app, args);
  if (sub == std::string::npos) return args;
  for (std::size_t i = sub + 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    const bool joined = args[i].starts_with("--config=");
    if (args[i] != "--config" && !joined) continue;
    const std::size_t n = joined || i + 1 == args.size() ? 1 : 2;
    std::vector<std::string> moved(args.begin() + static_cast<std::ptrdiff_t>(i),
                                   args.begin() + static_cast<std::ptrdiff_t>(i + n));
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
               args.begin() + static_cast<std::ptrdiff_t>(i + n));
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(sub), moved.begin(), moved.end());
    break;
  }
  return args;
}

std::vector<std::string> config_from_environment(std::vector<std::string> args, std::string& file) {
  file.clear();
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread starts
  const char* variable = std::getenv("TGW_CONFIG");
  if (variable == nullptr || *variable == '\0') return args;
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i)
    if (args[i] == "--config" || args[i].starts_with("--config=")) return args;
  file = variable;
  args.insert(args.begin() + (args.empty() ? 0 : 1), {"--config", file});
  return args;
}

namespace {

void forget_environment(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) opt->envname("");
  for (CLI::App* sub : app.get_subcommands({})) forget_environment(*sub);
}

}  // namespace

void environment_for_chosen_only(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* at = &app;
  std::size_t from = 1;
  for (;;) {
    const std::size_t i = subcommand_at(*at, args, from);
    CLI::App* chosen = nullptr;
    if (i != std::string::npos)
      for (CLI::App* sub : at->get_subcommands({}))
        if (sub->get_name() == args[i]) chosen = sub;
    for (CLI::App* sub : at->get_subcommands({}))
      if (sub != chosen) forget_environment(*sub);
    if (chosen == nullptr) return;
    at = chosen;
    from = i + 1;
  }
}

std::string unknown_subcommand(const CLI::App& app, const std::vector<std::string>& args) {
  // Down the subcommands named so far (`tgw command sned`: `command`, then `sned`),
  // as long as the one reached has subcommands of its own.
  const CLI::App* at = &app;
  std::string path = "tgw";
  std::size_t from = 1;
  for (;;) {
    const std::size_t i = subcommand_at(*at, args, from);
    if (i == std::string::npos) return {};
    const CLI::App* sub = subcommand_named(*at, args[i]);
    if (sub == nullptr) {
      const std::string& word = args[i];
      std::string nearest;
      std::size_t best = std::string::npos;
      for (const CLI::App* candidate : at->get_subcommands({})) {
        const std::size_t d = edit_distance(word, candidate->get_name());
        if (d < best) {
          best = d;
          nearest = candidate->get_name();
        }
      }
      const std::string of = at == &app ? std::string() : " of '" + path + "'";
      std::string message = "unknown subcommand '" + word + "'" + of;
      // A suggestion only when it is plausibly a typo, not a different word altogether.
      if (!nearest.empty() && best <= std::max<std::size_t>(2, nearest.size() / 3))
        message += "; did you mean '" + nearest + "'?";
      message += " (" + path + " --help lists the subcommands)";
      return message;
    }
    if (sub->get_subcommands({}).empty()) return {};
    at = sub;
    path += " " + sub->get_name();
    from = i + 1;
  }
}

std::string explain_parse_error(const CLI::App& app, const std::string& message) {
  static const std::regex out_of_range(R"(^(--[\w-]+): Value (.*) not in range (.*)$)");
  static const std::regex not_converted(R"(^Could not convert: (--[\w-]+) = (.*)$)");
  std::smatch m;
  if (std::regex_match(message, m, out_of_range) && !is_number(m[2]))
    return std::string(m[1]) + ": '" + std::string(m[2]) + "' is not a number (expected " +
           std::string(m[3]) + ")";
  if (std::regex_match(message, m, not_converted) && !is_number(m[2])) {
    const std::string type = type_of(app, std::string(m[1]).substr(2));
    if (type == "INT" || type == "UINT" || type == "FLOAT")
      return std::string(m[1]) + ": '" + std::string(m[2]) + "' is not a number (expected " +
             (type == "FLOAT"  ? "a number"
              : type == "UINT" ? "a whole number, 0 or more"
                               : "a whole number") +
             ")";
  }
  return message;
}

namespace {

struct alias {
  const char* design;
  const char* ours;
};
constexpr alias aliases[] = {{"JANITOR_INTERVAL_MS", "TGW_JANITOR_INTERVAL_MS"}};
// The aliases apply_environment_aliases() copied; read only after it ran.
bool copied[std::size(aliases)] = {};

}  // namespace

void apply_environment_aliases() {
  // NOLINTBEGIN(concurrency-mt-unsafe): before any thread starts
  for (std::size_t i = 0; i < std::size(aliases); ++i) {
    const char* design = std::getenv(aliases[i].design);
    if (design == nullptr || std::getenv(aliases[i].ours) != nullptr) continue;
    copied[i] = ::setenv(aliases[i].ours, design, 0) == 0;
  }
  // NOLINTEND(concurrency-mt-unsafe)
}

std::string variable_set_for(const std::string& variable) {
  for (std::size_t i = 0; i < std::size(aliases); ++i)
    if (copied[i] && variable == aliases[i].ours) return aliases[i].design;
  return variable;
}

}  // namespace tgw::infra
