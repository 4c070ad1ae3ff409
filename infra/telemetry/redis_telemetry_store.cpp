#include "infra/telemetry/redis_telemetry_store.hpp"

#include <algorithm>
#include <span>

#include "infra/redis/failure_cause.hpp"
#include "infra/redis/key_slot.hpp"
#include "infra/telemetry/gateway_library.hpp"
#include "infra/telemetry/telemetry_keys.hpp"

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
      out.arg(e.known_only ? "e" : "E");
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
    : conn_(std::move(where)),
      library_(conn_, gateway_library_source()),
      settings_(std::move(settings)),
      on_cluster_(conn_.settings().where.via_cluster()) {}

bool redis_telemetry_store::load_library(std::string& error) {
  return library_.load(error);
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
    // Stored on the master: a packet sent again is recognised by its fingerprint, and
    // its WAIT asked again once a replica is back (a failover's promoted replica has
    // none until the old master rejoins).
    out[i].retryable = true;
    // What WAIT did not confirm is a replica shortfall, even when WAIT itself failed.
    fail(out[i], redis::failure_kind::no_replicas, why);
  }
}

void redis_telemetry_store::fail(write_outcome& o, redis::failure_kind kind,
                                 const std::string& text) const {
  o.error = text;
  o.failure = redis::port_kind(kind);
  if (o.failure == ports::failure_kind::none) o.failure = ports::failure_kind::other;
  o.cause = redis::classify_redis_failure(kind, text, o.under_replicated, gateway_library_source(),
                                          on_cluster_);
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

redis_telemetry_store::group& redis_telemetry_store::group_for(std::size_t master) {
  for (std::size_t g = 0; g < groups_used_; ++g)
    if (groups_[g].master == master) return groups_[g];
  if (groups_used_ == groups_.size()) groups_.emplace_back();
  group& g = groups_[groups_used_++];
  g.master = master;
  g.encoded.clear();
  g.calls.clear();
  return g;
}

std::uint16_t redis_telemetry_store::slot_of_shard(std::uint32_t shard) {
  if (shard_slots_.size() != settings_.shards.count()) {
    shard_slots_.clear();
    for (std::uint32_t s = 0; s < settings_.shards.count(); ++s)
      shard_slots_.push_back(
          redis::key_slot(keys::telemetry_stream_in(settings_.shards.prefix(s))));
  }
  return shard_slots_[shard];
}

void redis_telemetry_store::fail_shard(std::uint32_t shard, const redis::value& why, bool retryable,
                                       std::vector<write_outcome>& out) const {
  for (std::size_t k = bounds_[shard]; k < bounds_[shard + 1]; ++k) {
    write_outcome& o = out[order_[k]];
    fail(o, why.failure, why.text);
    o.retryable = retryable;
  }
}

std::vector<write_outcome> redis_telemetry_store::write_batch(const std::vector<write_op>& ops) {
  std::vector<write_outcome> out(ops.size());
  if (ops.empty()) return out;
  redis::value failed;
  // A fresh connection may face a restarted Redis that lost the library.
  if (!library_.ensure(failed)) {
    for (write_outcome& o : out) {
      fail(o, failed.failure, failed.text);
      o.unreachable = redis::is_transport(failed.failure);
      // Nothing was sent: sending again later is safe for any op.
      o.retryable = o.unreachable;
    }
    return out;
  }
  group_by_shard(ops);
  // One round trip per master: a single node is one master; on a cluster each master
  // gets the calls of the shards it serves, and one WAIT after them on its own
  // connection, so the WAIT follows exactly the writes it confirms.
  // A map reloaded while grouping (a slot found without a master) renumbers the
  // masters: group again on the new map.
  for (int pass = 0; pass < 2; ++pass) {
    const std::uint64_t generation = conn_.map_generation();
    group_all(ops, out);
    if (conn_.map_generation() == generation) break;
    std::fill(out.begin(), out.end(), write_outcome{});
  }
  lessons_.clear();
  // Every master gets its pipeline before any reply is read: the masters work at once,
  // and the writer waits for the slowest rather than for each in turn.
  const std::span<group> round(groups_.data(), groups_used_);
  for (group& g : round)
    if (finish_group(g, out)) send_group(g);
  for (group& g : round) receive_group(g);
  // A restarted server that lost the library: load it once every reply of the round is
  // read (loading talks to the masters), then run the groups it refused again.
  const auto refused = [](const group& g) {
    return !g.replies.empty() && redis::function_library::missing(g.replies.front());
  };
  if (std::any_of(round.begin(), round.end(), refused) && library_.load(failed))
    for (group& g : round)
      if (refused(g)) {
        send_group(g);
        receive_group(g);
      }
  for (group& g : round) settle_group(g, ops, out);
  // Only now: reloading the map renumbers the masters the groups above were sent to.
  for (const redis::value& lesson : lessons_) conn_.learn(lesson);
  return out;
}

void redis_telemetry_store::group_all(const std::vector<write_op>& ops,
                                      std::vector<write_outcome>& out) {
  groups_used_ = 0;
  for (std::uint32_t shard = 0; shard + 1 < bounds_.size(); ++shard) {
    const std::size_t begin = bounds_[shard], end = bounds_[shard + 1];
    if (begin == end) continue;
    // A single server is master 0 of every slot.
    const auto master = conn_.master_of(slot_of_shard(shard));
    if (!master) {
      fail_shard(shard,
                 redis::value::make_error("CLUSTERDOWN no master serves the slot of key shard " +
                                          settings_.shards.prefix(shard)),
                 true, out);
      continue;
    }
    group& g = group_for(*master);
    for (std::size_t first = begin; first < end; first += ops_per_call) {
      const std::size_t last = std::min(end, first + ops_per_call);
      write_batch_command(g.encoded, ops,
                          std::span<const std::size_t>(order_).subspan(first, last - first),
                          settings_.shards.prefix(shard), settings_, probe_stream_);
      g.calls.push_back({first, last});
    }
  }
}

bool redis_telemetry_store::finish_group(group& g, std::vector<write_outcome>& out) {
  // Journal events wait as packets do: an event explains an ACK or an answer, and
  // must be as durable as what it explains.
  g.wait_reply = g.encoded.commands();
  if (settings_.ack_replicas > 0) {
    g.encoded.begin(3);
    g.encoded.arg("WAIT");
    g.encoded.arg(std::int64_t{settings_.ack_replicas});
    g.encoded.arg(static_cast<std::int64_t>(settings_.ack_replicas_timeout.count()));
  }
  g.replies.clear();
  if (g.encoded.complete()) return true;
  // A miscount would desynchronise the connection for every later call: refuse.
  for (const call& c : g.calls)
    for (std::size_t k = c.first; k < c.last; ++k)
      fail(out[order_[k]], redis::failure_kind::other,
           "tgw_persist_batch: argument count mismatch");
  g.calls.clear();
  return false;
}

void redis_telemetry_store::send_group(group& g) {
  // `sent` stays true on one server whatever happened: a partial write may have run.
  g.written = conn_.send_encoded_to(g.master, g.encoded.bytes(), g.send_failed, g.sent);
}

void redis_telemetry_store::receive_group(group& g) {
  if (g.calls.empty()) return;
  const std::size_t count = g.encoded.commands();
  if (!g.written)
    g.replies.assign(count, g.send_failed);
  else
    g.replies = conn_.receive_from(g.master, count);
}

void redis_telemetry_store::settle_group(const group& g, const std::vector<write_op>& ops,
                                         std::vector<write_outcome>& out) {
  const std::vector<redis::value>& replies = g.replies;
  const bool sent = g.sent;
  bool learned = false;
  for (std::size_t k = 0; k < g.calls.size(); ++k) {
    const call& c = g.calls[k];
    const redis::value& r = replies[k];
    const bool well_formed = r.is_array() && r.elements.size() == c.last - c.first;
    if (r.is_error() && on_cluster_ && !learned) {
      lessons_.push_back(r);  // a MOVED's new owner, or a map to reload after an IO error
      learned = true;
    }
    for (std::size_t i = c.first; i < c.last; ++i) {
      write_outcome& o = out[order_[i]];
      if (r.is_error()) {
        fail(o, r.failure, r.text);
        const bool io = redis::is_transport(r.failure);
        // One server: its failure is the store's. A cluster: only this master's.
        o.unreachable = !on_cluster_ && io;
        // Not run where it was sent (moved, no master, refused before sending): safe
        // to send again. Sent and lost: a packet is (a resend is recognised by its
        // fingerprint), an event is not (it would be journaled twice).
        const bool not_run = redis::is_redirect(r.failure) || (io && !sent);
        o.retryable = not_run || (io && ops[order_[i]].is_packet);
      } else if (!well_formed) {
        fail(o, redis::failure_kind::other, "unexpected reply to tgw_persist_batch");
      } else {
        const std::int64_t stored = r.elements[i - c.first].as_int().value_or(0);
        o.ok = true;
        o.duplicate = stored == -1;
        o.unknown_device = stored == -2;
        o.stored = stored < 0 ? 0 : stored;
      }
    }
  }
  if (settings_.ack_replicas > 0) {
    covered_.clear();
    for (const call& c : g.calls)
      for (std::size_t i = c.first; i < c.last; ++i) covered_.push_back(order_[i]);
    require_replicas(covered_, replies[g.wait_reply], out);
  }
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
