#include "infra/redis/command_keys.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace tgw::infra::redis {
namespace {

bool same(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

bool one_of(std::string_view name, std::span<const std::string_view> names) noexcept {
  return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return same(name, n); });
}

constexpr std::array<std::string_view, 27> keyless = {
    "PING",      "INFO",    "ROLE",   "TIME",      "CLIENT",   "ECHO",    "AUTH",
    "HELLO",     "SELECT",  "WAIT",   "MULTI",     "EXEC",     "DISCARD", "UNWATCH",
    "CLUSTER",   "COMMAND", "DBSIZE", "LATENCY",   "SLOWLOG",  "ACL",     "READONLY",
    "READWRITE", "SCAN",    "KEYS",   "RANDOMKEY", "SENTINEL", "LASTSAVE"};

// Subcommand first, key second.
constexpr std::array<std::string_view, 4> key_after_subcommand = {"XINFO", "XGROUP", "MEMORY",
                                                                  "OBJECT"};

constexpr std::array<std::string_view, 6> scripts = {"FCALL",   "FCALL_RO", "EVAL",
                                                     "EVALSHA", "EVAL_RO",  "EVALSHA_RO"};

}  // namespace

command_target route_of(std::span<const std::string_view> argv) noexcept {
  if (argv.empty()) return {};
  const std::string_view name = argv[0];
  if (same(name, "FUNCTION") || same(name, "SCRIPT")) {
    // Loading and flushing go everywhere; FUNCTION LIST, STATS, DUMP read one master.
    if (argv.size() > 1 &&
        one_of(argv[1], std::array<std::string_view, 4>{"LOAD", "DELETE", "FLUSH", "RESTORE"}))
      return {command_route::all_masters, {}};
    return {};
  }
  if (same(name, "FLUSHALL") || same(name, "FLUSHDB")) return {command_route::all_masters, {}};
  if (same(name, "CONFIG")) {
    if (argv.size() > 1 && same(argv[1], "SET")) return {command_route::all_masters, {}};
    return {};
  }
  if (one_of(name, keyless)) return {};
  if (one_of(name, scripts)) {
    std::size_t numkeys = 0;
    if (argv.size() < 3) return {};
    const auto [ptr, ec] =
        std::from_chars(argv[2].data(), argv[2].data() + argv[2].size(), numkeys);
    if (ec != std::errc{} || numkeys == 0 || argv.size() < 4) return {};
    return {command_route::by_key, argv[3]};
  }
  if (same(name, "XREAD") || same(name, "XREADGROUP")) {
    for (std::size_t i = 1; i + 1 < argv.size(); ++i)
      if (same(argv[i], "STREAMS")) return {command_route::by_key, argv[i + 1]};
    return {};
  }
  if (one_of(name, key_after_subcommand)) {
    if (argv.size() > 2) return {command_route::by_key, argv[2]};
    return {};
  }
  if (argv.size() > 1) return {command_route::by_key, argv[1]};
  return {};
}

}  // namespace tgw::infra::redis
