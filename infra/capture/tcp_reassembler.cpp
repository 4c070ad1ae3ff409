#include "infra/capture/tcp_reassembler.hpp"

#include <algorithm>

#include "infra/capture/tcp_synth.hpp"

namespace tgw::infra::capture {
namespace {

constexpr std::int64_t wrap = std::int64_t{1} << 32;
constexpr std::size_t head_size = 17;  // length field and 15 IMEI digits

bool opens_with_handshake(const std::vector<std::uint8_t>& head) {
  if (head.size() < 3 || head[0] != 0x00 || head[1] != 0x0F) return false;
  return std::all_of(head.begin() + 2, head.end(),
                     [](std::uint8_t b) { return b >= '0' && b <= '9'; });
}

close_cause flipped(close_cause c) {
  switch (c) {
    case close_cause::device_fin:
      return close_cause::gateway_fin;
    case close_cause::device_rst:
      return close_cause::gateway_rst;
    case close_cause::gateway_fin:
      return close_cause::device_fin;
    case close_cause::gateway_rst:
      return close_cause::device_rst;
    case close_cause::none:
      break;
  }
  return c;
}

// The stream offset of `seq`, unwrapped to the 64-bit offset nearest the next byte
// expected. Negative for bytes before the stream's first (a capture that started
// mid-stream and saw a retransmission of older data).
std::int64_t unwrap(std::uint64_t next, std::uint32_t base, std::uint32_t seq) {
  const auto rel = static_cast<std::int64_t>(static_cast<std::uint32_t>(seq - base));
  const auto expected = static_cast<std::int64_t>(next);
  std::int64_t candidate = (expected & ~(wrap - 1)) | rel;
  if (candidate > expected + wrap / 2) candidate -= wrap;
  if (candidate + wrap / 2 < expected) candidate += wrap;
  return candidate;
}

}  // namespace

std::uint64_t tcp_reassembler::offset_of(const direction& d, std::uint32_t seq) const {
  const std::int64_t at = unwrap(d.next, d.base, seq);
  return at < 0 ? 0 : static_cast<std::uint64_t>(at);
}

void tcp_reassembler::add(std::int64_t unix_us, const tcp_packet& p) {
  ++order_;
  const bool syn = (p.flags & tcp_flags::syn) != 0;
  const bool syn_only = syn && (p.flags & tcp_flags::ack) == 0;
  const auto key = std::minmax(p.from, p.to);
  const auto found = live_.find(key);
  bool fresh = found == live_.end();
  if (!fresh && syn_only) {
    const connection& old = connections_[found->second];
    // A retransmitted SYN repeats the first one; any other SYN opens a new
    // connection on a reused 4-tuple.
    fresh = old.ended || old.a.delivered > 0 || old.b.delivered > 0 ||
            (old.a.based && old.a.base != p.seq + 1);
  }
  if (fresh) {
    connection c;
    c.rec.number = connections_.size() + 1;
    // The side that sent the SYN is side a; a SYN-ACK seen first names it too.
    const bool initiator_is_to = syn && !syn_only;
    c.rec.device = initiator_is_to ? p.to : p.from;
    c.rec.gateway = initiator_is_to ? p.from : p.to;
    c.rec.first_us = unix_us;
    connections_.push_back(std::move(c));
    live_[key] = connections_.size() - 1;
  }
  connection& c = connections_[live_[key]];
  const bool from_a = p.from == c.rec.device;
  direction& d = from_a ? c.a : c.b;
  if (syn) {
    if (!d.based || d.delivered == 0) {
      d.based = true;
      d.base = p.seq + 1;
    }
    c.saw_syn = true;
  }
  if ((p.flags & tcp_flags::rst) != 0) {
    if (c.rec.closed == close_cause::none) {
      c.rec.closed = from_a ? close_cause::device_rst : close_cause::gateway_rst;
      c.rec.closed_us = unix_us;
      c.rec.closed_order = order_;
    }
    d.done = true;
    c.ended = true;
    return;
  }
  if (!d.based && (!p.payload.empty() || (p.flags & tcp_flags::fin) != 0)) {
    // No SYN seen: the first byte captured is taken as the stream's start.
    d.based = true;
    d.base = p.seq;
  }
  if (p.missing > 0)
    c.problems.emplace_back(from_a, "lost " + std::to_string(p.missing) +
                                        " bytes to the capture's snap length at offset " +
                                        std::to_string(offset_of(d, p.seq) + p.payload.size()));
  if (!p.payload.empty()) accept_data(c, from_a, unix_us, p.seq, p.payload);
  if ((p.flags & tcp_flags::fin) != 0 && d.based && !d.fin) {
    d.fin = true;
    d.fin_at = offset_of(d, p.seq) + p.payload.size() + p.missing;
  }
  check_end(c, from_a, unix_us);
}

void tcp_reassembler::accept_data(connection& c, bool from_a, std::int64_t unix_us,
                                  std::uint32_t seq, std::span<const std::uint8_t> payload) {
  direction& d = from_a ? c.a : c.b;
  const std::int64_t start = unwrap(d.next, d.base, seq);
  const std::int64_t end = start + static_cast<std::int64_t>(payload.size());
  const auto next = static_cast<std::int64_t>(d.next);
  if (end <= next) return;  // a retransmission of what was delivered
  if (start > next) {
    auto& held = d.pending[static_cast<std::uint64_t>(start)];
    if (held.size() < payload.size()) held.assign(payload.begin(), payload.end());
    return;
  }
  deliver(c, from_a, unix_us, payload.subspan(static_cast<std::size_t>(next - start)));
  // Segments that arrived early and now fit.
  while (!d.pending.empty() && d.pending.begin()->first <= d.next) {
    auto it = d.pending.begin();
    const std::uint64_t held_end = it->first + it->second.size();
    if (held_end > d.next)
      deliver(c, from_a, unix_us,
              std::span<const std::uint8_t>(it->second).subspan(d.next - it->first));
    d.pending.erase(it);
  }
}

void tcp_reassembler::deliver(connection& c, bool from_a, std::int64_t unix_us,
                              std::span<const std::uint8_t> bytes) {
  direction& d = from_a ? c.a : c.b;
  d.next += bytes.size();
  d.delivered += bytes.size();
  for (std::size_t i = 0; i < bytes.size() && d.head.size() < head_size; ++i)
    d.head.push_back(bytes[i]);
  auto& chunks = c.rec.chunks;
  // Bytes one packet made available form one chunk, as one socket read would.
  if (!chunks.empty() && chunks.back().order == order_ && chunks.back().from_device == from_a) {
    chunks.back().bytes.insert(chunks.back().bytes.end(), bytes.begin(), bytes.end());
    return;
  }
  chunks.push_back(stream_chunk{unix_us, order_, from_a, {bytes.begin(), bytes.end()}});
}

void tcp_reassembler::check_end(connection& c, bool from_a, std::int64_t unix_us) {
  direction& d = from_a ? c.a : c.b;
  if (!d.fin || d.done || d.next < d.fin_at) return;
  d.done = true;
  if (c.rec.closed == close_cause::none) {
    c.rec.closed = from_a ? close_cause::device_fin : close_cause::gateway_fin;
    c.rec.closed_us = unix_us;
    c.rec.closed_order = order_;
  }
  if (c.a.done && c.b.done) c.ended = true;
}

std::vector<recorded_connection> tcp_reassembler::finish() {
  std::vector<recorded_connection> out;
  out.reserve(connections_.size());
  for (connection& c : connections_) {
    for (const bool from_a : {true, false}) {
      const direction& d = from_a ? c.a : c.b;
      std::uint64_t held = 0;
      for (const auto& [at, bytes] : d.pending) held += bytes.size();
      if (held > 0)
        c.problems.emplace_back(from_a, "has a gap at offset " + std::to_string(d.next) + "; " +
                                            std::to_string(held) +
                                            " bytes after it are not replayed");
      else if (d.fin && !d.done)
        c.problems.emplace_back(
            from_a, "ends in a gap before its FIN at offset " + std::to_string(d.fin_at));
    }
    // Side a is the initiator; swap when the other side turns out to be the device.
    bool a_is_device = true;
    if (opens_with_handshake(c.a.head))
      a_is_device = true;
    else if (opens_with_handshake(c.b.head))
      a_is_device = false;
    else if (c.rec.gateway.port == device_port_)
      a_is_device = true;
    else if (c.rec.device.port == device_port_)
      a_is_device = false;
    if (!a_is_device) {
      std::swap(c.rec.device, c.rec.gateway);
      for (auto& chunk : c.rec.chunks) chunk.from_device = !chunk.from_device;
      c.rec.closed = flipped(c.rec.closed);
    }
    for (const auto& [from_a, text] : c.problems)
      c.rec.problems.push_back((from_a == a_is_device ? "device stream " : "gateway stream ") +
                               text);
    out.push_back(std::move(c.rec));
  }
  connections_.clear();
  live_.clear();
  return out;
}

}  // namespace tgw::infra::capture
