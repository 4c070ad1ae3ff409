#include "infra/commands/redis_command_store.hpp"

#include <algorithm>

#include "codecs/imei.hpp"
#include "infra/commands/command_library.hpp"
#include "infra/redis/failure_cause.hpp"
#include "infra/registry/registry_keys.hpp"
#include "infra/telemetry/telemetry_keys.hpp"
#include "infra/text/hex.hpp"
#include "infra/text/safe_text.hpp"

namespace tgw::infra::commands {
namespace {

// Janitor batches: one call holds Redis for a few hundred microseconds at most.
constexpr std::size_t orphan_batch = 100;
// Pending entries are re-read in pages so a long backlog is not one huge reply.
constexpr std::size_t pending_page = 100;

// A Redis error reply as the port's failure; an ACL refusal inside a Function names
// the command of its line in the library.
bool failed(const redis::value& v, ports::store_failure& error) {
  if (!v.is_error()) return false;
  error = redis::store_failure_of(v.failure, v.text, command_library_source());
  return true;
}

std::int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

redis_command_store::redis_command_store(redis::connection::options where, std::string instance_id,
                                         std::size_t max_payload, redis::key_shards shards,
                                         bool allow_control_characters)
    : conn_(std::move(where)),
      library_(conn_, command_library_source()),
      instance_(std::move(instance_id)),
      max_payload_(max_payload),
      allow_control_characters_(allow_control_characters),
      shards_(std::move(shards)) {}

bool redis_command_store::load_library(std::string& error) {
  return library_.load(error);
}

bool redis_command_store::prepare(ports::store_failure& error) {
  if (std::string text; !load_library(text)) {
    error = redis::store_failure_of_text(text, command_library_source());
    return false;
  }
  return ensure_group(error);
}

redis::value redis_command_store::call(const std::vector<std::string>& argv) {
  return library_.call(argv);
}

bool redis_command_store::ensure_group(ports::store_failure& error) {
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    // Id 0, not $: entries other instances added before this consumer started are
    // still delivered.
    const redis::value v =
        conn_.command({"XGROUP", "CREATE", stream(shard), consumer_group, "0", "MKSTREAM"});
    if (!redis::error_is(v, "BUSYGROUP") && failed(v, error)) return false;
    // Remembered so a janitor can find this stream once the instance is dead.
    const std::string known = keys::instances_with_streams_in(shards_.prefix(shard));
    if (failed(conn_.command({"SADD", known, instance_}), error)) return false;
  }
  return true;
}

std::optional<std::vector<std::string>> redis_command_store::orphan_candidates(
    ports::store_failure& error) {
  std::vector<std::string> dead;
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    const std::string& prefix = shards_.prefix(shard);
    const redis::value members =
        conn_.command({"SMEMBERS", keys::instances_with_streams_in(prefix)});
    if (failed(members, error)) return std::nullopt;
    std::vector<std::vector<std::string>> probes;
    for (const redis::value& m : members.elements)
      probes.push_back({"EXISTS", registry::keys::heartbeat(m.text, prefix)});
    if (probes.empty()) continue;
    const std::vector<redis::value> alive = conn_.pipeline(probes);
    for (std::size_t i = 0; i < alive.size(); ++i) {
      if (failed(alive[i], error)) return std::nullopt;
      if (alive[i].integer == 0) dead.push_back(members.elements[i].text);
    }
  }
  // Dead in several shards: one candidate.
  std::sort(dead.begin(), dead.end());
  dead.erase(std::unique(dead.begin(), dead.end()), dead.end());
  return dead;
}

bool redis_command_store::parse_read(const redis::value& v, std::uint32_t shard,
                                     std::vector<command_entry>& out, std::string& last_id,
                                     ports::store_failure& error) {
  if (redis::error_is(v, "NOGROUP")) {
    // The stream was deleted (by a janitor that took this instance for dead, or a
    // Redis that restarted empty): re-create it and carry on with nothing to read.
    return ensure_group(error);
  }
  if (failed(v, error)) return false;
  if (v.is_nil() || !v.is_array() || v.elements.empty()) return true;
  const redis::value& per_stream = v.elements[0];
  if (!per_stream.is_array() || per_stream.elements.size() != 2) return true;
  for (const redis::value& entry : per_stream.elements[1].elements) {
    if (!entry.is_array() || entry.elements.empty()) continue;
    std::vector<std::string> fields;
    const bool present = entry.elements.size() == 2 && entry.elements[1].is_array();
    if (present) {
      fields.reserve(entry.elements[1].elements.size());
      for (const redis::value& f : entry.elements[1].elements) fields.push_back(f.text);
    }
    last_id = entry.elements[0].text;
    out.push_back(ports::parse_command_entry(last_id, fields, present, max_payload_,
                                             allow_control_characters_));
    out.back().shard = shard;
  }
  return true;
}

std::optional<std::vector<command_entry>> redis_command_store::read_pending(
    ports::store_failure& error) {
  std::vector<command_entry> all;
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    std::string last_id = "0";
    for (;;) {
      const std::size_t before = all.size();
      const redis::value v =
          conn_.command({"XREADGROUP", "GROUP", consumer_group, instance_, "COUNT",
                         std::to_string(pending_page), "STREAMS", stream(shard), last_id});
      if (!parse_read(v, shard, all, last_id, error)) return std::nullopt;
      if (all.size() == before) break;
    }
  }
  return all;
}

std::optional<std::vector<command_entry>> redis_command_store::read_all_shards(
    std::size_t count, ports::store_failure& error) {
  std::vector<std::vector<std::string>> reads;
  reads.reserve(shards_.count());
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard)
    reads.push_back({"XREADGROUP", "GROUP", consumer_group, instance_, "COUNT",
                     std::to_string(count), "STREAMS", stream(shard), ">"});
  const std::vector<redis::value> replies = conn_.pipeline(reads);
  std::vector<command_entry> out;
  // A shard whose master is down (or whose slot has none) fails alone: its entries stay
  // in its stream for the next round, and the other shards' commands go on.
  std::size_t failed = 0;
  for (std::uint32_t shard = 0; shard < replies.size(); ++shard) {
    std::string last_id;
    if (!parse_read(replies[shard], shard, out, last_id, error)) ++failed;
  }
  if (failed == replies.size()) return std::nullopt;
  return out;
}

bool redis_command_store::wait_for_wake(std::chrono::milliseconds block,
                                        ports::store_failure& error) {
  // A wake added after the last one seen returns at once, so one added between the
  // shard reads and this wait is not lost.
  const redis::value v = conn_.command({"XREAD", "COUNT", "1", "BLOCK",
                                        std::to_string(std::max<std::int64_t>(1, block.count())),
                                        "STREAMS", keys::wake(instance_), last_wake_});
  if (failed(v, error)) return false;
  if (v.is_array() && !v.elements.empty() && v.elements[0].elements.size() == 2 &&
      !v.elements[0].elements[1].elements.empty())
    last_wake_ = v.elements[0].elements[1].elements.back().elements[0].text;
  return true;
}

std::optional<std::vector<command_entry>> redis_command_store::read_new(
    std::chrono::milliseconds block, std::size_t count, ports::store_failure& error) {
  if (shards_.count() > 1) {
    auto found = read_all_shards(count, error);
    if (!found || !found->empty()) return found;
    if (!wait_for_wake(block, error)) return std::nullopt;
    return read_all_shards(count, error);
  }
  std::vector<command_entry> out;
  std::string last_id;
  const redis::value v = conn_.command(
      {"XREADGROUP", "GROUP", consumer_group, instance_, "COUNT", std::to_string(count), "BLOCK",
       std::to_string(std::max<std::int64_t>(1, block.count())), "STREAMS", stream(), ">"});
  if (!parse_read(v, 0, out, last_id, error)) return std::nullopt;
  return out;
}

std::vector<std::string> redis_command_store::resolve_command(const command_entry& entry,
                                                              const resolution& outcome,
                                                              std::int64_t journal_maxlen) const {
  // An entry without a usable IMEI has no journal to write to: pass two keys only.
  // Every key in the entry's shard: the stream it came from, that shard's responses,
  // and its device's journal. An entry put by hand into another shard's stream than
  // its device's is answered without the journal event, which lives elsewhere.
  const bool journal =
      codecs::valid_imei(entry.target_imei) && shards_.shard_of(entry.target_imei) == entry.shard;
  const std::string& prefix = shards_.prefix(entry.shard);
  std::vector<std::string> argv = {"FCALL",
                                   "tgw_cmd_resolve",
                                   journal ? "4" : "3",
                                   stream(entry.shard),
                                   keys::responses_in(prefix),
                                   keys::marker(entry.command_id, prefix)};
  if (journal) argv.push_back(telemetry::keys::journal(entry.target_imei, prefix));
  // The reply's bytes exactly, as hex, and beside them as text only when they are
  // text: a device may answer with any bytes (a binary Codec 12 reply), and a reader of
  // `response` must be able to take it for UTF-8.
  const std::string& bytes = outcome.response;
  const bool text = valid_utf8(bytes);
  argv.insert(
      argv.end(),
      {consumer_group, entry.entry_id, entry.command_id, outcome.status,
       text ? bytes : std::string(), outcome.failure_reason, instance_,
       std::to_string(journal_maxlen), entry.target_imei,
       to_hex(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()))});
  return argv;
}

std::vector<std::string> redis_command_store::dispatched_command(
    const command_entry& entry, std::int64_t journal_maxlen) const {
  if (!codecs::valid_imei(entry.target_imei)) return {};
  const std::string& prefix = shards_.prefix_of(entry.target_imei);
  return {"FCALL",
          "tgw_cmd_dispatched",
          "2",
          telemetry::keys::journal(entry.target_imei, prefix),
          keys::marker(entry.command_id, prefix),
          entry.command_id,
          std::to_string(entry.codec),
          instance_,
          std::to_string(journal_maxlen)};
}

bool redis_command_store::resolve(const command_entry& entry, const resolution& outcome,
                                  ports::store_failure& error, std::int64_t journal_maxlen) {
  return !failed(call(resolve_command(entry, outcome, journal_maxlen)), error);
}

bool redis_command_store::dispatched(const command_entry& entry, ports::store_failure& error,
                                     std::int64_t journal_maxlen) {
  const auto argv = dispatched_command(entry, journal_maxlen);
  return argv.empty() || !failed(call(argv), error);
}

std::vector<ports::store_failure> redis_command_store::resolve_all(
    std::span<const std::pair<command_entry, resolution>> outcomes, std::int64_t journal_maxlen) {
  std::vector<std::vector<std::string>> commands;
  commands.reserve(outcomes.size());
  for (const auto& [entry, outcome] : outcomes)
    commands.push_back(resolve_command(entry, outcome, journal_maxlen));
  return run_batch(commands);
}

std::vector<dispatch_outcome> redis_command_store::dispatched_all(
    std::span<const command_entry* const> entries, std::int64_t journal_maxlen) {
  std::vector<std::vector<std::string>> commands;
  commands.reserve(entries.size());
  for (const command_entry* entry : entries)
    commands.push_back(dispatched_command(*entry, journal_maxlen));
  std::vector<redis::value> replies;
  std::vector<ports::store_failure> errors = run_batch(commands, &replies);
  std::vector<dispatch_outcome> out(entries.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    // The reply says "answered already" even when the batch failed after it (a WAIT
    // that fell short): the command must not be delivered either way.
    if (replies[i].as_int() == -1)
      out[i].status = dispatch_status::answered_already;
    else if (errors[i].failed())
      out[i] = {dispatch_status::not_journaled, std::move(errors[i])};
  }
  return out;
}

std::vector<ports::store_failure> redis_command_store::run_batch(
    const std::vector<std::vector<std::string>>& commands, std::vector<redis::value>* results) {
  if (results != nullptr) results->assign(commands.size(), redis::value{});
  std::vector<ports::store_failure> errors(commands.size());
  std::vector<std::vector<std::string>> real;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (commands[i].empty()) continue;  // nothing to write (e.g. no journal)
    real.push_back(commands[i]);
    index.push_back(i);
  }
  if (real.empty()) return errors;
  // Where each command's reply is, and the reply of the WAIT that covers it: one WAIT
  // at the end on a single node; on a cluster one after each command, which then goes
  // to that command's master.
  std::vector<std::size_t> reply_of(real.size()), wait_of(real.size());
  std::vector<std::vector<std::string>> sent;
  const std::vector<std::string> wait = {"WAIT", std::to_string(replicas_),
                                         std::to_string(replicas_timeout_.count())};
  for (std::size_t k = 0; k < real.size(); ++k) {
    reply_of[k] = sent.size();
    sent.push_back(std::move(real[k]));
    if (replicas_ > 0 && shards_.tagged()) sent.push_back(wait);
  }
  if (replicas_ > 0 && !shards_.tagged()) sent.push_back(wait);
  for (std::size_t k = 0; k < real.size(); ++k)
    wait_of[k] = shards_.tagged() ? reply_of[k] + 1 : sent.size() - 1;
  const std::vector<redis::value> replies =
      library_.run(sent.size(), [&] { return conn_.pipeline(sent); });
  for (std::size_t k = 0; k < index.size(); ++k) {
    if (reply_of[k] >= replies.size()) {
      errors[index[k]] = redis::store_failure_of_text("IO no reply");
    } else if (replies[reply_of[k]].is_error()) {
      const redis::value& reply = replies[reply_of[k]];
      errors[index[k]] = redis::store_failure_of(
          reply.failure, reply.text.empty() ? "error" : reply.text, command_library_source());
    } else {
      if (results != nullptr) (*results)[index[k]] = replies[reply_of[k]];
    }
    if (!errors[index[k]].failed() && replicas_ > 0) {
      const auto confirmed =
          wait_of[k] < replies.size() ? replies[wait_of[k]].as_int() : std::nullopt;
      if (!confirmed || *confirmed < replicas_)
        errors[index[k]] = redis::store_failure_of(
            redis::failure_kind::no_replicas,
            "replicas: WAIT confirmed " +
                (confirmed ? std::to_string(*confirmed) : std::string("none")) + " of " +
                std::to_string(replicas_),
            {}, {}, true);
    }
  }
  return errors;
}

std::optional<std::size_t> redis_command_store::drain_offline(const std::string& imei,
                                                              ports::store_failure& error) {
  const std::uint32_t shard = shards_.shard_of(imei);
  const std::string& prefix = shards_.prefix(shard);
  const redis::value v =
      call({"FCALL", "tgw_cmd_drain_offline", "3", keys::offline(imei, prefix), stream(shard),
            keys::responses_in(prefix), imei, std::to_string(now_s())});
  if (failed(v, error)) return std::nullopt;
  return static_cast<std::size_t>(v.as_int().value_or(0));
}

std::optional<redis_command_store::orphan_counts> redis_command_store::adopt_orphans(
    const std::string& dead_instance, ports::store_failure& error) {
  orphan_counts counts;
  for (std::uint32_t shard = 0; shard < shards_.count(); ++shard) {
    const std::string& prefix = shards_.prefix(shard);
    for (;;) {
      const redis::value v =
          call({"FCALL", "tgw_cmd_orphans", "3", keys::outbound(dead_instance, prefix),
                registry::keys::registry_in(prefix), keys::responses_in(prefix), dead_instance,
                std::to_string(now_s()), std::to_string(orphan_batch)});
      if (failed(v, error)) return std::nullopt;
      if (!v.is_array() || v.elements.size() != 4) {
        error = redis::store_failure_of_text("tgw_cmd_orphans: unexpected reply");
        return std::nullopt;
      }
      const auto n = [&](std::size_t i) {
        return static_cast<std::size_t>(v.elements[i].as_int().value_or(0));
      };
      counts.handled += n(0);
      counts.rerouted += n(1);
      counts.failed += n(2);
      // A pass that handled nothing cannot make progress; stop rather than spin.
      if (n(3) == 0) {
        const std::string known = keys::instances_with_streams_in(prefix);
        if (failed(conn_.command({"SREM", known, dead_instance}), error)) return std::nullopt;
        break;
      }
      if (n(0) == 0) break;
    }
  }
  if (shards_.tagged()) conn_.command({"DEL", keys::wake(dead_instance)});
  return counts;
}

}  // namespace tgw::infra::commands
