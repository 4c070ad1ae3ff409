#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/connection.hpp"

namespace tgw::infra::redis {

/// A Redis Function library as every store calls it. Functions survive restarts and
/// failovers only as far as the server's data does: a server restarted empty, or a
/// replica set up without them, lacks the library. So it is loaded (FUNCTION LOAD
/// REPLACE) whenever the connection is new, and a call that finds a function missing
/// loads it and runs once more. Belongs to the thread of its connection.
class function_library {
 public:
  /// `source` is the library's Lua text (it outlives this object: the embedded sources).
  function_library(connection& conn, std::string_view source) : conn_(conn), source_(source) {}

  /// FUNCTION LOAD REPLACE now; false with Redis' error (or the client's: its kind in
  /// `failed.failure`).
  bool load(value& failed);
  bool load(std::string& error);
  /// Loads unless loaded on the connection as it is now; false with the error.
  bool ensure(value& failed);
  bool ensure(std::string& error);
  /// One command that calls the library (FCALL ...), or the error that stopped it.
  value call(const std::vector<std::string>& argv);
  /// The replies of a batch sent by `send`, which is repeated once when its first
  /// reply says a function is missing; `send` is called only when the library is
  /// loaded (otherwise every reply is the load's error).
  template <class Send>
  std::vector<value> run(std::size_t count, Send send);
  /// Whether a reply says the library is missing.
  [[nodiscard]] static bool missing(const value& reply) {
    return error_is(reply, "ERR Function not found");
  }

 private:
  void forget_if_disconnected() noexcept {
    if (!conn_.connected()) loaded_ = false;
  }

  connection& conn_;
  std::string_view source_;
  bool loaded_ = false;
};

template <class Send>
std::vector<value> function_library::run(std::size_t count, Send send) {
  value failed;
  if (!ensure(failed)) return std::vector<value>(count, failed);
  std::vector<value> replies = send();
  if (!replies.empty() && missing(replies.front()) && load(failed)) replies = send();
  forget_if_disconnected();
  return replies;
}

}  // namespace tgw::infra::redis
