#include "infra/commands/command_publisher.hpp"

#include <algorithm>
#include <array>
#include <random>
#include <thread>

#include "infra/commands/command_keys.hpp"
#include "infra/commands/command_library.hpp"
#include "infra/registry/registry_keys.hpp"
#include "infra/telemetry/telemetry_keys.hpp"
#include "infra/text/hex.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra::commands {
namespace {

constexpr std::size_t read_count = 100;

bool failed(const redis::value& v, std::string& error) {
  if (!v.is_error()) return false;
  error = v.text;
  return true;
}

command_response to_response(const redis::value& entry) {
  command_response r;
  r.entry_id = entry.elements[0].text;
  if (entry.elements.size() < 2) return r;
  const auto& f = entry.elements[1].elements;
  for (std::size_t i = 0; i + 1 < f.size(); i += 2) {
    const std::string& name = f[i].text;
    const std::string& v = f[i + 1].text;
    if (name == "command_id") {
      r.command_id = v;
    } else if (name == "status") {
      r.status = v;
    } else if (name == "response") {
      r.response = v;
    } else if (name == "response_hex") {
      r.response_hex = v;
    } else if (name == "failure_reason") {
      r.failure_reason = v;
    } else if (name == "imei") {
      r.imei = v;
    } else if (name == "responded_at") {
      r.responded_at = f[i + 1].as_int().value_or(0);
    }
  }
  // A gateway from before response_hex wrote the reply's bytes into response as they
  // came: bytes that are no UTF-8 are no text, and are kept as hex instead.
  if (!r.response.empty() && r.response_hex.empty())
    r.response_hex = to_hex(
        std::span(reinterpret_cast<const std::uint8_t*>(r.response.data()), r.response.size()));
  if (!valid_utf8(r.response)) r.response.clear();
  return r;
}

}  // namespace

std::string new_command_id() {
  // random_device per id: ids must not repeat across processes started at the same
  // time, which a time-seeded generator cannot promise.
  std::random_device rd;
  static constexpr std::array<char, 16> hex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                               '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  std::string id;
  id.reserve(32);
  for (int word = 0; word < 4; ++word) {
    std::uint32_t bits = rd();
    for (int i = 0; i < 8; ++i) {
      id.push_back(hex[bits & 0xFU]);
      bits >>= 4U;
    }
  }
  return id;
}

command_publisher::command_publisher(redis::connection::options where,
                                     std::chrono::milliseconds block, redis::key_shards shards)
    : conn_(std::move(where)),
      library_(conn_, command_library_source()),
      block_(std::max(block, std::chrono::milliseconds{1})),
      shards_(std::move(shards)) {}

bool command_publisher::load_library(std::string& error) {
  return library_.load(error);
}

redis::value command_publisher::call(const std::vector<std::string>& argv) {
  return library_.call(argv);
}

std::optional<publish_result> command_publisher::publish(
    const std::string& imei, const std::string& text, int codec, std::chrono::seconds ttl,
    bool queue_if_offline, const std::string& command_id, std::string& error,
    const publish_once* once) {
  publish_result result;
  result.command_id = command_id;
  std::int64_t expires_at = 0;
  if (ttl.count() > 0)
    expires_at = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count() +
                 ttl.count();
  const std::string& prefix = shards_.prefix_of(imei);
  result.responses = keys::responses_in(prefix);
  std::vector<std::string> argv = {"FCALL",
                                   "tgw_cmd_publish",
                                   once != nullptr ? "6" : "5",
                                   registry::keys::registry_in(prefix),
                                   result.responses,
                                   keys::offline(imei, prefix),
                                   keys::marker(result.command_id, prefix),
                                   telemetry::keys::journal(imei, prefix)};
  if (once != nullptr) argv.push_back(keys::idempotency(once->key, prefix));
  argv.insert(argv.end(),
              {imei, result.command_id, std::to_string(codec), text, std::to_string(expires_at),
               queue_if_offline ? "1" : "0", std::to_string(ttl.count()), publisher_});
  if (once != nullptr)
    argv.insert(argv.end(), {once->fingerprint, std::to_string(once->ttl.count())});
  const redis::value v = call(argv);
  if (failed(v, error)) return std::nullopt;
  // A repeated or conflicting idempotency key adds the first request's command id.
  const bool earlier = v.is_array() && !v.elements.empty() &&
                       (v.elements[0].text == "repeated" || v.elements[0].text == "conflict");
  if (!v.is_array() || v.elements.size() != (earlier ? 5U : 4U)) {
    error = "tgw_cmd_publish: unexpected reply";
    return std::nullopt;
  }
  result.status = v.elements[0].text;
  result.owner = v.elements[1].text;
  result.entry_id = v.elements[2].text;
  result.last_response_id = v.elements[3].text;
  if (earlier) {
    result.repeated = result.status == "repeated";
    result.conflict = !result.repeated;
    result.status = result.repeated ? v.elements[1].text : std::string();
    result.owner.clear();
    result.command_id = v.elements[4].text;
    return result;
  }
  if (shards_.tagged() && result.status == "sent") {
    // The owner blocks on its wake stream, not on this shard's stream. A lost wake only
    // delays the command to the owner's next read (at most its block time).
    conn_.command({"XADD", keys::wake(result.owner), "MAXLEN", "1", "*", "shard",
                   std::to_string(shards_.shard_of(imei))});
  }
  return result;
}

std::optional<std::string> command_publisher::settle(const std::string& imei,
                                                     const std::string& command_id,
                                                     const std::string& reason,
                                                     std::string& error) {
  const std::string& prefix = shards_.prefix_of(imei);
  const redis::value v = call({"FCALL", "tgw_cmd_settle", "2", keys::marker(command_id, prefix),
                               keys::responses_in(prefix), command_id, imei, reason});
  if (failed(v, error)) return std::nullopt;
  return v.text;
}

std::optional<std::int64_t> command_publisher::confirm_replicas(int replicas,
                                                                std::chrono::milliseconds timeout) {
  return conn_.command({"WAIT", std::to_string(replicas), std::to_string(timeout.count())})
      .as_int();
}

std::optional<std::vector<command_response>> command_publisher::read_after(
    const std::string& stream, std::string& after_id, std::chrono::milliseconds block,
    std::string& error) {
  std::vector<std::string> argv = {"XREAD", "COUNT", std::to_string(read_count)};
  if (block.count() > 0) {
    argv.insert(argv.end(), {"BLOCK", std::to_string(block.count())});
  }
  argv.insert(argv.end(), {"STREAMS", stream, after_id});
  const redis::value v = conn_.command(argv);
  if (failed(v, error)) return std::nullopt;
  std::vector<command_response> out;
  if (!v.is_array() || v.elements.empty() || v.elements[0].elements.size() != 2) return out;
  for (const redis::value& entry : v.elements[0].elements[1].elements) {
    if (!entry.is_array() || entry.elements.empty()) continue;
    out.push_back(to_response(entry));
    after_id = out.back().entry_id;
  }
  return out;
}

std::optional<command_response> command_publisher::wait_response(
    const std::string& imei, const std::string& command_id, const std::string& after_id,
    std::chrono::milliseconds timeout, std::string& error, const std::function<bool()>& cancelled) {
  const std::string stream = keys::responses_in(shards_.prefix_of(imei));
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + timeout;
  std::string from = after_id.empty() ? "0-0" : after_id;
  for (;;) {
    // Rounded up: truncating gave up to a millisecond before the deadline.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0 || (cancelled && cancelled())) return std::nullopt;
    const auto batch = read_after(stream, from, std::min(left, block_), error);
    if (!batch) return std::nullopt;
    for (const command_response& r : *batch)
      if (r.command_id == command_id) return r;
  }
}

bool command_publisher::watch(const std::function<bool(const command_response&)>& on_response,
                              std::string& error, const std::function<bool()>& cancelled) {
  // Start from each stream's newest id rather than reading with '$' each round: '$'
  // would skip whatever arrives between two reads.
  std::vector<std::string> streams, from;
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    streams.push_back(keys::responses_in(shards_.prefix(shard)));
    const redis::value newest =
        conn_.command({"XREVRANGE", streams.back(), "+", "-", "COUNT", "1"});
    if (failed(newest, error)) return false;
    from.emplace_back("0-0");
    if (newest.is_array() && !newest.elements.empty())
      from.back() = newest.elements[0].elements[0].text;
  }
  // One stream: a blocking read. Several (a cluster: one per shard, in different
  // slots): each read at once in turn, and a pause after a round that found nothing.
  const bool poll = streams.size() > 1;
  const auto pause = std::min(block_, std::chrono::milliseconds{50});
  for (;;) {
    if (cancelled && cancelled()) return true;
    bool any = false;
    for (std::size_t i = 0; i < streams.size(); ++i) {
      const auto batch =
          read_after(streams[i], from[i], poll ? std::chrono::milliseconds{0} : block_, error);
      if (!batch) return false;
      any = any || !batch->empty();
      for (const command_response& r : *batch)
        if (!on_response(r)) return true;
    }
    if (poll && !any) std::this_thread::sleep_for(pause);
  }
}

}  // namespace tgw::infra::commands
