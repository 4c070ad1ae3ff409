#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tgw::infra::redis {

/// Where a command goes in a Redis Cluster.
enum class command_route : std::uint8_t {
  by_key,       ///< To the master of its key's slot.
  any_master,   ///< Keyless (PING, INFO, WAIT, MULTI, ...): the master used last.
  all_masters,  ///< FUNCTION LOAD, SCRIPT LOAD, FLUSHALL, CONFIG SET: every master.
};

struct command_target {
  command_route route = command_route::any_master;
  std::string_view key;  ///< For by_key: the key whose slot decides.
};

/// Which key decides where `argv` runs, for the commands tgw sends: the first key
/// of a multi-key command (Redis refuses it with CROSSSLOT when the others are in
/// another slot), the first key of FCALL and EVAL, the first stream of XREAD and
/// XREADGROUP, the key after a subcommand (XINFO, XGROUP, MEMORY USAGE, OBJECT).
/// Commands that name no key, and SCAN (which walks one node), are any_master.
[[nodiscard]] command_target route_of(std::span<const std::string_view> argv) noexcept;

}  // namespace tgw::infra::redis
