#include "infra/telemetry/redis_telemetry_store.hpp"

#include <algorithm>

#include "infra/telemetry/gateway_library.hpp"

namespace tgw::infra::telemetry {
namespace {

// Ops per FCALL. A call runs atomically and holds Redis for its whole length, so a
// batch of hundreds of ops is cut into calls of this size, pipelined in one round trip:
// the call's fixed cost is shared without stalling other clients for long.
constexpr std::size_t ops_per_call = 64;

void append_packet(std::vector<std::string>& keys, std::vector<std::string>& args,
                   const packet_job& p) {
  keys.push_back(keys::journal(p.imei));
  keys.push_back(keys::device(p.imei));
  args.push_back("P");
  args.push_back(p.imei);
  args.push_back(p.fingerprint);
  args.push_back(std::to_string(p.records.size()));
  for (const record_fields& r : p.records) args.insert(args.end(), r.begin(), r.end());
}

void append_event(std::vector<std::string>& keys, std::vector<std::string>& args,
                  const journal_event& e) {
  keys.push_back(keys::journal(e.imei));
  keys.push_back(keys::device(e.imei));
  args.push_back("E");
  args.push_back(e.imei);
  args.push_back(e.type);
  args.push_back(std::to_string(e.online));
  args.push_back(std::to_string(e.fields.size()));
  for (const auto& [k, v] : e.fields) {
    args.push_back(k);
    args.push_back(v);
  }
}

/// FCALL tgw_persist_batch for ops[first, last).
std::vector<std::string> batch_command(const std::vector<write_op>& ops, std::size_t first,
                                       std::size_t last, const store_settings& s) {
  std::vector<std::string> keys{keys::telemetry_stream};
  std::vector<std::string> args{s.instance_id, std::to_string(s.journal_maxlen),
                                std::to_string(s.telemetry_maxlen)};
  for (std::size_t i = first; i < last; ++i) {
    if (ops[i].is_packet)
      append_packet(keys, args, ops[i].packet);
    else
      append_event(keys, args, ops[i].event);
  }
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("FCALL");
  argv.emplace_back("tgw_persist_batch");
  argv.push_back(std::to_string(keys.size()));
  for (std::string& k : keys) argv.push_back(std::move(k));
  for (std::string& a : args) argv.push_back(std::move(a));
  return argv;
}

}  // namespace

redis_telemetry_store::redis_telemetry_store(redis::connection::options where,
                                             store_settings settings)
    : conn_(std::move(where)), settings_(std::move(settings)) {}

bool redis_telemetry_store::load_library(std::string& error) {
  const redis::value v =
      conn_.command({"FUNCTION", "LOAD", "REPLACE", std::string(gateway_library_source())});
  if (v.is_error()) {
    error = v.text;
    loaded_ = false;
    return false;
  }
  loaded_ = true;
  return true;
}

std::vector<write_outcome> redis_telemetry_store::write_batch(const std::vector<write_op>& ops) {
  std::vector<write_outcome> out(ops.size());
  if (ops.empty()) return out;
  std::string error;
  // A fresh connection may face a restarted Redis that lost the library.
  if ((!conn_.connected() || !loaded_) && !load_library(error)) {
    for (write_outcome& o : out) o.error = error;
    return out;
  }
  std::vector<std::vector<std::string>> commands;
  commands.reserve((ops.size() + ops_per_call - 1) / ops_per_call);
  for (std::size_t first = 0; first < ops.size(); first += ops_per_call)
    commands.push_back(
        batch_command(ops, first, std::min(ops.size(), first + ops_per_call), settings_));
  std::vector<redis::value> replies = conn_.pipeline(commands);
  if (!replies.empty() && redis::error_is(replies.front(), "ERR Function not found") &&
      load_library(error))
    replies = conn_.pipeline(commands);
  if (!conn_.connected()) loaded_ = false;
  for (std::size_t c = 0; c < commands.size(); ++c) {
    const redis::value& r = replies[c];
    const std::size_t first = c * ops_per_call;
    const std::size_t last = std::min(ops.size(), first + ops_per_call);
    const bool well_formed = r.is_array() && r.elements.size() == last - first;
    for (std::size_t i = first; i < last; ++i) {
      if (r.is_error()) {
        out[i].error = r.text;
      } else if (!well_formed) {
        out[i].error = "unexpected reply to tgw_persist_batch";
      } else {
        const std::int64_t stored = r.elements[i - first].as_int().value_or(0);
        out[i].ok = true;
        out[i].duplicate = stored < 0;
        out[i].stored = stored < 0 ? 0 : stored;
      }
    }
  }
  return out;
}

}  // namespace tgw::infra::telemetry
