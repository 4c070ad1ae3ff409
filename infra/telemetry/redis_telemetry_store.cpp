#include "infra/telemetry/redis_telemetry_store.hpp"

#include <algorithm>
#include <span>

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

/// Writes FCALL tgw_persist_batch for the ops `order[first, last)` straight into the
/// wire protocol: a batch of a few hundred records is a few thousand arguments, and
/// building them as strings first and having hiredis format them again cost as much as
/// the rest of the writer. Every op of one call belongs to the key shard `prefix`.
void write_batch_command(redis::resp_writer& out, const std::vector<write_op>& ops,
                         std::span<const std::size_t> order, const std::string& prefix,
                         const store_settings& s, std::string_view probe_stream) {
  std::size_t argc = 3 + 1 + 3;  // FCALL name numkeys, the stream, instance and maxlens
  for (const std::size_t i : order) argc += 2 + op_args(ops[i]);
  out.begin(argc);
  out.arg("FCALL");
  out.arg("tgw_persist_batch");
  out.arg(static_cast<std::int64_t>(1 + 2 * order.size()));
  if (!probe_stream.empty()) {
    out.arg(std::string(prefix).append(probe_stream));
  } else if (prefix.empty()) {
    out.arg(keys::telemetry_stream);
  } else {
    out.arg(keys::telemetry_stream_in(prefix));
  }
  for (const std::size_t i : order) {
    const std::string& imei = ops[i].is_packet ? ops[i].packet.imei : ops[i].event.imei;
    out.arg(keys::journal(imei, prefix));
    out.arg(keys::device(imei, prefix));
  }
  out.arg(s.instance_id);
  out.arg(static_cast<std::int64_t>(s.journal_maxlen));
  out.arg(static_cast<std::int64_t>(s.telemetry_maxlen));
  for (const std::size_t i : order) {
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

const std::string& imei_of(const write_op& op) {
  return op.is_packet ? op.packet.imei : op.event.imei;
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

void redis_telemetry_store::require_replicas(std::span<const std::size_t> covered,
                                             const redis::value& wait_reply,
                                             std::vector<write_outcome>& out) const {
  const std::int64_t confirmed = wait_reply.as_int().value_or(-1);
  if (confirmed >= settings_.ack_replicas) return;
  const std::string why = wait_reply.is_error()
                              ? "replicas: WAIT failed: " + wait_reply.text
                              : "replicas: WAIT confirmed " + std::to_string(confirmed) + " of " +
                                    std::to_string(settings_.ack_replicas) + " within " +
                                    std::to_string(settings_.ack_replicas_timeout.count()) + " ms";
  for (const std::size_t i : covered) {
    if (!out[i].ok) continue;
    out[i].ok = false;
    out[i].under_replicated = true;
    out[i].error = why;
  }
}

void redis_telemetry_store::group_by_shard(const std::vector<write_op>& ops) {
  const std::uint32_t shards = settings_.shards.count();
  order_.resize(ops.size());
  bounds_.assign(shards + 1, 0);
  if (shards == 1) {
    for (std::size_t i = 0; i < ops.size(); ++i) order_[i] = i;
    bounds_[1] = ops.size();
    return;
  }
  // A counting sort, stable, so a device's ops keep their order within its shard.
  shard_of_.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    shard_of_[i] = settings_.shards.shard_of(imei_of(ops[i]));
    ++bounds_[shard_of_[i] + 1];
  }
  for (std::uint32_t s = 0; s < shards; ++s) bounds_[s + 1] += bounds_[s];
  next_.assign(bounds_.begin(), bounds_.end() - 1);
  for (std::size_t i = 0; i < ops.size(); ++i) order_[next_[shard_of_[i]]++] = i;
}

std::vector<write_outcome> redis_telemetry_store::write_batch(const std::vector<write_op>& ops) {
  std::vector<write_outcome> out(ops.size());
  if (ops.empty()) return out;
  std::string error;
  // A fresh connection may face a restarted Redis that lost the library.
  if ((!conn_.connected() || !loaded_) && !load_library(error)) {
    for (write_outcome& o : out) {
      o.error = error;
      o.unreachable = error.starts_with("IO");
    }
    return out;
  }
  group_by_shard(ops);
  // Per shard: its calls, then one WAIT when it holds packets. On a cluster the WAIT
  // follows its shard's calls to their master; on a single node there is one shard, so
  // one WAIT per pipeline covers every write this connection made before it.
  calls_.clear();
  waits_.clear();
  encoded_.clear();
  for (std::uint32_t shard = 0; shard + 1 < bounds_.size(); ++shard) {
    const std::size_t begin = bounds_[shard], end = bounds_[shard + 1];
    if (begin == end) continue;
    for (std::size_t first = begin; first < end; first += ops_per_call) {
      const std::size_t last = std::min(end, first + ops_per_call);
      write_batch_command(encoded_, ops,
                          std::span<const std::size_t>(order_).subspan(first, last - first),
                          settings_.shards.prefix(shard), settings_, probe_stream_);
      calls_.push_back({first, last});
    }
    // Journal events wait as packets do: an event explains an ACK or an answer, and
    // must be as durable as what it explains.
    if (settings_.ack_replicas > 0) {
      waits_.emplace_back(encoded_.commands(), shard);
      encoded_.begin(3);
      encoded_.arg("WAIT");
      encoded_.arg(std::int64_t{settings_.ack_replicas});
      encoded_.arg(static_cast<std::int64_t>(settings_.ack_replicas_timeout.count()));
    }
  }
  if (!encoded_.complete()) {
    // A miscount would desynchronise the connection for every later call: refuse.
    for (write_outcome& o : out) o.error = "tgw_persist_batch: argument count mismatch";
    return out;
  }
  std::vector<redis::value> replies = conn_.pipeline_encoded(encoded_.bytes(), encoded_.commands());
  if (!replies.empty() && redis::error_is(replies.front(), "ERR Function not found") &&
      load_library(error))
    replies = conn_.pipeline_encoded(encoded_.bytes(), encoded_.commands());
  if (!conn_.connected()) loaded_ = false;
  std::size_t reply = 0;
  std::size_t next_wait = 0;
  for (const call& c : calls_) {
    while (next_wait < waits_.size() && waits_[next_wait].first == reply) {
      ++reply;
      ++next_wait;
    }
    const redis::value& r = replies[reply++];
    const bool well_formed = r.is_array() && r.elements.size() == c.last - c.first;
    for (std::size_t k = c.first; k < c.last; ++k) {
      write_outcome& o = out[order_[k]];
      if (r.is_error()) {
        o.error = r.text;
        // One server: its failure is the store's. A cluster: only this call's master.
        o.unreachable = !settings_.shards.tagged() && r.text.starts_with("IO");
      } else if (!well_formed) {
        o.error = "unexpected reply to tgw_persist_batch";
      } else {
        const std::int64_t stored = r.elements[k - c.first].as_int().value_or(0);
        o.ok = true;
        o.duplicate = stored < 0;
        o.stored = stored < 0 ? 0 : stored;
      }
    }
  }
  for (const auto& [index, shard] : waits_)
    require_replicas(std::span<const std::size_t>(order_).subspan(
                         bounds_[shard], bounds_[shard + 1] - bounds_[shard]),
                     replies[index], out);
  return out;
}

write_outcome redis_telemetry_store::probe(std::string& cleanup_error) {
  write_op op;
  op.is_packet = true;
  op.packet.imei = "probe:" + settings_.instance_id;
  op.packet.fingerprint = "probe";
  op.packet.codec = "8";
  record_fields r;
  r.fill("0");
  r[9] = "{}";
  r[10] = "";
  op.packet.records.push_back(std::move(r));
  const std::vector<write_op> ops = {std::move(op)};
  probe_stream_ = "telemetry:probe:" + settings_.instance_id;
  std::vector<write_outcome> out = write_batch(ops);
  probe_stream_.clear();
  // The probe's keys, in its shard: leave nothing behind for readers of the keyspace.
  const std::string& prefix =
      settings_.shards.prefix(settings_.shards.shard_of(ops[0].packet.imei));
  const redis::value deleted = conn_.command(
      {"DEL", prefix + "telemetry:probe:" + settings_.instance_id,
       keys::journal(ops[0].packet.imei, prefix), keys::device(ops[0].packet.imei, prefix)});
  cleanup_error = deleted.is_error() ? deleted.text : std::string();
  return out.front();
}

}  // namespace tgw::infra::telemetry
