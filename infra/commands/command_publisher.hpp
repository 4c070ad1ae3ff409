#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "infra/redis/connection.hpp"
#include "infra/redis/function_library.hpp"
#include "infra/redis/key_shards.hpp"

namespace tgw::infra::commands {

/// What tgw_cmd_publish decided.
struct publish_result {
  std::string status;  ///< sent, queued, offline, or answered (a repeated publish)
  std::string owner;   ///< The instance the command went to; for offline, the dead owner if any.
  std::string entry_id;
  std::string command_id;
  /// The newest commands:responses id at the moment of publishing: wait from here and
  /// the response cannot be missed.
  std::string last_response_id;
  /// The responses stream the answer will be in (its device's key shard).
  std::string responses;
  /// With an idempotency key: an earlier publish with the key decided; `status` and
  /// `command_id` are that publish's, and nothing was published now.
  bool repeated = false;
  /// With an idempotency key: it was used before for another request (fingerprint);
  /// `command_id` is that request's command, and nothing was published.
  bool conflict = false;
};

/// An application's request to publish at most once: `key` (already digested with the
/// publisher and device: commands::keys::idempotency) names it, `fingerprint` tells a
/// retry of the same request from another one, `ttl` is how long the key is kept.
struct publish_once {
  std::string key;
  std::string fingerprint;
  std::chrono::seconds ttl{86400};
};

/// One entry of commands:responses.
struct command_response {
  std::string entry_id;
  std::string command_id;
  std::string status;    ///< delivered, responded or failed
  std::string response;  ///< The device's reply as text, when it is valid UTF-8.
  std::string failure_reason;
  std::int64_t responded_at = 0;  ///< ms since the epoch, Redis server time
  std::string imei;               ///< The command's target; empty in entries from before it.
  std::string response_hex;       ///< The reply's exact bytes as hex; empty without a reply.
};

/// A fresh 128-bit random command id, 32 lowercase hex digits.
[[nodiscard]] std::string new_command_id();

/// The publishing side of commands over one blocking connection: routes a command to
/// the instance holding the device and waits for its response. One per thread.
///
/// On a Redis Cluster a command is published in its device's key shard (registry,
/// owner's outbound stream, responses), and the owner's wake stream is then added to
/// so that it reads at once (see command_store).
///
/// Reads block for at most `block` (1000 ms by default) per round; the connection's
/// io_timeout must be longer than that (e.g. 3000 ms), or hiredis gives up on the
/// socket while the server is still holding the read.
class command_publisher {
 public:
  explicit command_publisher(redis::connection::options where,
                             std::chrono::milliseconds block = std::chrono::milliseconds{1000},
                             redis::key_shards shards = {});

  bool load_library(std::string& error);
  /// Who publishes ("ops@host", a service's name): journaled with each command it
  /// publishes, for the device's command history. Empty by default.
  void identify_as(std::string publisher) { publisher_ = std::move(publisher); }
  /// Publishes `text` for `imei` as command `command_id` (new_command_id()). `ttl` 0
  /// means the command never expires. nullopt with `error` on a Redis failure.
  /// Publishing the same id again changes nothing and returns what the first publish
  /// decided (status "answered" once it has its response): a publish whose outcome a
  /// lost connection hid is safely repeated.
  std::optional<publish_result> publish(const std::string& imei, const std::string& text, int codec,
                                        std::chrono::seconds ttl, bool queue_if_offline,
                                        const std::string& command_id, std::string& error,
                                        const publish_once* once = nullptr);
  /// The same with a fresh command id.
  std::optional<publish_result> publish(const std::string& imei, const std::string& text, int codec,
                                        std::chrono::seconds ttl, bool queue_if_offline,
                                        std::string& error) {
    return publish(imei, text, codec, ttl, queue_if_offline, new_command_id(), error);
  }
  /// tgw_cmd_settle: "published" or "answered" while the store has the command; when it
  /// does not (its publish was lost with a failed master), ends it with failed/`reason`
  /// and returns "settled". nullopt with `error` on a Redis failure.
  std::optional<std::string> settle(const std::string& imei, const std::string& command_id,
                                    const std::string& reason, std::string& error);
  /// WAIT `replicas` `timeout` on the publishing connection: how many replicas hold
  /// what it wrote so far (the command just published); nullopt on a Redis failure.
  std::optional<std::int64_t> confirm_replicas(int replicas, std::chrono::milliseconds timeout);
  /// Waits up to `timeout` for the response to `command_id` among the responses to
  /// commands for `imei` after `after_id`. nullopt with `error` empty on timeout (or
  /// when `cancelled` said so), with `error` set on a Redis failure.
  std::optional<command_response> wait_response(const std::string& imei,
                                                const std::string& command_id,
                                                const std::string& after_id,
                                                std::chrono::milliseconds timeout,
                                                std::string& error,
                                                const std::function<bool()>& cancelled = {});
  /// Calls `on_response` for every response added from now on, until it returns false
  /// or `cancelled` returns true (checked at least once per block). False with `error`
  /// on a Redis failure. On a cluster the shards' streams are polled in turn, so
  /// responses of different devices may come out of time order.
  bool watch(const std::function<bool(const command_response&)>& on_response, std::string& error,
             const std::function<bool()>& cancelled = {});

 private:
  redis::value call(const std::vector<std::string>& argv);
  /// One XREAD round on `stream` after `after_id`; advances it. nullopt on error.
  std::optional<std::vector<command_response>> read_after(const std::string& stream,
                                                          std::string& after_id,
                                                          std::chrono::milliseconds block,
                                                          std::string& error);

  redis::connection conn_;
  redis::function_library library_;
  std::chrono::milliseconds block_;
  redis::key_shards shards_;
  std::string publisher_;
};

}  // namespace tgw::infra::commands
