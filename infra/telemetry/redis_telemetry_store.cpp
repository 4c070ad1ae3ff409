#include "infra/telemetry/redis_telemetry_store.hpp"

#include "infra/telemetry/gateway_library.hpp"

namespace tgw::infra::telemetry {
namespace {

std::vector<std::string> packet_command(const packet_job& p, const store_settings& s) {
  std::vector<std::string> argv = {"FCALL",
                                   "tgw_persist_packet",
                                   "3",
                                   keys::telemetry_stream,
                                   keys::journal(p.imei),
                                   keys::device(p.imei),
                                   p.imei,
                                   s.instance_id,
                                   p.fingerprint,
                                   std::to_string(s.journal_maxlen),
                                   std::to_string(s.telemetry_maxlen),
                                   std::to_string(p.records.size())};
  argv.reserve(argv.size() + p.records.size() * 10);
  for (const record_fields& r : p.records) argv.insert(argv.end(), r.begin(), r.end());
  return argv;
}

std::vector<std::string> event_command(const journal_event& e, const store_settings& s) {
  std::vector<std::string> argv = {"FCALL",
                                   "tgw_append_event",
                                   "2",
                                   keys::journal(e.imei),
                                   keys::device(e.imei),
                                   e.type,
                                   s.instance_id,
                                   std::to_string(s.journal_maxlen),
                                   std::to_string(e.online)};
  for (const auto& [k, v] : e.fields) {
    argv.push_back(k);
    argv.push_back(v);
  }
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
  commands.reserve(ops.size());
  for (const write_op& op : ops)
    commands.push_back(op.is_packet ? packet_command(op.packet, settings_)
                                    : event_command(op.event, settings_));
  std::vector<redis::value> replies = conn_.pipeline(commands);
  if (!replies.empty() && redis::error_is(replies.front(), "ERR Function not found") &&
      load_library(error))
    replies = conn_.pipeline(commands);
  if (!conn_.connected()) loaded_ = false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const redis::value& r = replies[i];
    if (r.is_error()) {
      out[i].error = r.text;
    } else if (ops[i].is_packet && r.is_array() && r.elements.size() == 2) {
      out[i].ok = true;
      out[i].stored = r.elements[0].as_int().value_or(0);
      out[i].duplicate = r.elements[1].as_int().value_or(0) == 1;
    } else {
      out[i].ok = !ops[i].is_packet;
      if (!out[i].ok) out[i].error = "unexpected reply";
    }
  }
  return out;
}

}  // namespace tgw::infra::telemetry
