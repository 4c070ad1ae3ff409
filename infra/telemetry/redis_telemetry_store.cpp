#include "infra/telemetry/redis_telemetry_store.hpp"

#include <algorithm>

#include "infra/telemetry/gateway_library.hpp"

namespace tgw::infra::telemetry {
namespace {

// Ops per FCALL. A call runs atomically and holds Redis for its whole length, so a
// batch of hundreds of ops is cut into calls of this size, pipelined in one round trip:
// the call's fixed cost is shared without stalling other clients for long.
constexpr std::size_t ops_per_call = 64;

/// Arguments an op adds after the keys: see tgw_persist_batch in gateway_library.lua.
std::size_t op_args(const write_op& op) {
  return op.is_packet ? 5 + std::tuple_size_v<record_fields> * op.packet.records.size()
                      : 5 + 2 * op.event.fields.size();
}

/// Writes FCALL tgw_persist_batch for ops[first, last) straight into the wire protocol:
/// a batch of a few hundred records is a few thousand arguments, and building them as
/// strings first and having hiredis format them again cost as much as the rest of
/// the writer.
void write_batch_command(redis::resp_writer& out, const std::vector<write_op>& ops,
                         std::size_t first, std::size_t last, const store_settings& s) {
  std::size_t argc = 3 + 1 + 3;  // FCALL name numkeys, the stream, instance and maxlens
  for (std::size_t i = first; i < last; ++i) argc += 2 + op_args(ops[i]);
  out.begin(argc);
  out.arg("FCALL");
  out.arg("tgw_persist_batch");
  out.arg(static_cast<std::int64_t>(1 + 2 * (last - first)));
  out.arg(keys::telemetry_stream);
  for (std::size_t i = first; i < last; ++i) {
    const std::string& imei = ops[i].is_packet ? ops[i].packet.imei : ops[i].event.imei;
    out.arg(keys::journal(imei));
    out.arg(keys::device(imei));
  }
  out.arg(s.instance_id);
  out.arg(static_cast<std::int64_t>(s.journal_maxlen));
  out.arg(static_cast<std::int64_t>(s.telemetry_maxlen));
  for (std::size_t i = first; i < last; ++i) {
    if (ops[i].is_packet) {
      const packet_job& p = ops[i].packet;
      out.arg("P");
      out.arg(p.imei);
      out.arg(p.fingerprint);
      out.arg(static_cast<std::int64_t>(p.records.size()));
      out.arg(p.codec);
      for (const record_fields& r : p.records)
        for (const std::string& f : r) out.arg(f);
    } else {
      const journal_event& e = ops[i].event;
      out.arg("E");
      out.arg(e.imei);
      out.arg(e.type);
      out.arg(static_cast<std::int64_t>(e.online));
      out.arg(static_cast<std::int64_t>(e.fields.size()));
      for (const auto& [k, v] : e.fields) {
        out.arg(k);
        out.arg(v);
      }
    }
  }
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

void redis_telemetry_store::require_replicas(const std::vector<write_op>& ops,
                                             const redis::value& wait_reply,
                                             std::vector<write_outcome>& out) const {
  const std::int64_t confirmed = wait_reply.as_int().value_or(-1);
  if (confirmed >= settings_.ack_replicas) return;
  const std::string why = wait_reply.is_error()
                              ? "replicas: WAIT failed: " + wait_reply.text
                              : "replicas: WAIT confirmed " + std::to_string(confirmed) + " of " +
                                    std::to_string(settings_.ack_replicas) + " within " +
                                    std::to_string(settings_.ack_replicas_timeout.count()) + " ms";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].is_packet || !out[i].ok) continue;
    out[i].ok = false;
    out[i].under_replicated = true;
    out[i].error = why;
  }
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
  encoded_.clear();
  for (std::size_t first = 0; first < ops.size(); first += ops_per_call)
    write_batch_command(encoded_, ops, first, std::min(ops.size(), first + ops_per_call),
                        settings_);
  if (!encoded_.complete()) {
    // A miscount would desynchronise the connection for every later call: refuse.
    for (write_outcome& o : out) o.error = "tgw_persist_batch: argument count mismatch";
    return out;
  }
  // One WAIT per pipeline, not per packet: it covers every write this connection made
  // before it. Batches of journal events alone do not wait.
  const bool wait =
      settings_.ack_replicas > 0 &&
      std::any_of(ops.begin(), ops.end(), [](const write_op& op) { return op.is_packet; });
  const std::size_t calls = encoded_.commands();
  if (wait) {
    encoded_.begin(3);
    encoded_.arg("WAIT");
    encoded_.arg(std::int64_t{settings_.ack_replicas});
    encoded_.arg(static_cast<std::int64_t>(settings_.ack_replicas_timeout.count()));
  }
  std::vector<redis::value> replies = conn_.pipeline_encoded(encoded_.bytes(), encoded_.commands());
  if (!replies.empty() && redis::error_is(replies.front(), "ERR Function not found") &&
      load_library(error))
    replies = conn_.pipeline_encoded(encoded_.bytes(), encoded_.commands());
  if (!conn_.connected()) loaded_ = false;
  for (std::size_t c = 0; c < calls; ++c) {
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
  if (wait) require_replicas(ops, replies.back(), out);
  return out;
}

}  // namespace tgw::infra::telemetry
