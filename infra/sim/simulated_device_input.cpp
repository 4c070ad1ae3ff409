// What the simulated device receives: reads and datagrams, told apart into the IMEI
// verdict, ACKs and commands; and what it does when an ACK is late.
#include "infra/sim/simulated_device.hpp"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "codecs/byte_order.hpp"
#include "codecs/command.hpp"

namespace tgw::infra::sim {

namespace {

using boost::system::error_code;

// Bytes a device reads into at first; a command reply needs more and grows it.
constexpr std::size_t initial_rx = 64;
// Server frames above this size are junk for a tracker: no command is that long.
constexpr std::size_t max_rx = std::size_t{64} * 1024;
// Codec id, quantity, type, size and quantity: the smallest command data length.
constexpr std::uint32_t min_command_data = 8;

}  // namespace

void simulated_device::start_read() {
  if (rx_begin_ > 0) {
    std::memmove(rx_.data(), rx_.data() + rx_begin_, rx_end_ - rx_begin_);
    rx_end_ -= rx_begin_;
    rx_begin_ = 0;
  }
  if (rx_.size() == rx_end_) {
    if (rx_.size() >= max_rx) {
      bump(env_.counters.unexpected_bytes, rx_end_);
      drop_connection(true);
      return;
    }
    rx_.resize(std::max(initial_rx, rx_.size() * 2));
  }
  if (tls_) {
    tls_read(conn_seq_);
    return;
  }
  tcp_.async_read_some(
      net::asio::buffer(rx_.data() + rx_end_, rx_.size() - rx_end_),
      [this, seq = conn_seq_](const error_code& ec, std::size_t n) { on_read(seq, ec, n); });
}

void simulated_device::on_read(std::uint32_t seq, const error_code& ec, std::size_t n) {
  if (seq != conn_seq_ || phase_ == phase::done) return;
  if (ec) {
    drop_connection(true);
    return;
  }
  rx_end_ += n;
  process_input();
  if (seq == conn_seq_ && phase_ != phase::done) start_read();
}

void simulated_device::start_receive() {
  if (rx_.size() < initial_rx) rx_.resize(initial_rx);
  udp_.async_receive(
      net::asio::buffer(rx_),
      [this, seq = conn_seq_](const error_code& ec, std::size_t n) { on_receive(seq, ec, n); });
}

void simulated_device::on_receive(std::uint32_t seq, const error_code& ec, std::size_t n) {
  if (seq != conn_seq_ || phase_ == phase::done) return;
  if (ec == net::asio::error::operation_aborted) return;
  // Other errors are ICMP reports (port unreachable) of an earlier datagram: the ACK
  // timeout resends, as a device on a lossy link does.
  if (!ec) {
    const std::uint8_t* p = rx_.data();
    if (n == 7 && p[0] == 0x00 && p[1] == 0x05 && codecs::load_be16(p + 2) == udp_packet_id_ &&
        p[5] == avl_packet_id_)
      on_ack(p[6]);
    else
      bump(env_.counters.unexpected_bytes, n);
  }
  if (seq == conn_seq_ && phase_ != phase::done) start_receive();
}

void simulated_device::process_input() {
  const std::uint32_t seq = conn_seq_;
  while (seq == conn_seq_ && phase_ != phase::done) {
    const std::size_t available = rx_end_ - rx_begin_;
    const std::uint8_t* p = rx_.data() + rx_begin_;
    if (phase_ == phase::handshaking) {
      if (available < 1) return;
      ++rx_begin_;
      on_verdict(p[0]);
      continue;
    }
    if (available < 4) return;
    const std::uint32_t head = codecs::load_be32(p);
    if (head != 0) {  // Only an ACK starts with a non-zero word.
      rx_begin_ += 4;
      on_ack(head);
      continue;
    }
    // Four zero bytes: a command frame's preamble, or an ACK of zero records.
    if (available < 9) return;
    const std::uint32_t data_size = codecs::load_be32(p + 4);
    const std::uint8_t codec = p[8];
    if (!codecs::is_command_codec(codec) || data_size < min_command_data ||
        data_size > max_rx - 12) {
      if (awaiting_ack_) {
        rx_begin_ += 4;
        on_ack(0);
        continue;
      }
      bump(env_.counters.unexpected_bytes, available);
      drop_connection(true);
      return;
    }
    const std::size_t total = std::size_t{data_size} + 12;
    if (available < total) return;  // start_read() grows the buffer.
    rx_begin_ += total;
    on_command({p, total});
  }
}

void simulated_device::on_verdict(std::uint8_t verdict) {
  if (verdict == codecs::imei_accepted) {
    bump(env_.counters.handshakes_accepted);
    backoff_attempts_ = 0;
    cancel_timer();
    phase_ = phase::ready;
    if (has_packet_) {
      bump(env_.counters.resends);
      queue_frame();
    } else {
      send_new_packet();
    }
  } else if (verdict == codecs::imei_rejected) {
    spdlog::debug("device {}: IMEI rejected", imei_.str());
    bump(env_.counters.handshakes_rejected);
    finish();
  } else {
    bump(env_.counters.unexpected_bytes);
    drop_connection(true);
  }
}

void simulated_device::on_ack(std::uint32_t count) {
  // ACKs come in the order of the copies they answer. While an intact copy sent on
  // this connection is unanswered, an ACK that arrives as the corrupted packet waits
  // belongs to that copy (a late ACK of a resend), not to the corrupted packet.
  const bool earlier_copy_pending = outstanding_acks_ > 0;
  if (earlier_copy_pending) --outstanding_acks_;
  if (!awaiting_ack_ || !has_packet_) {
    bump(env_.counters.unexpected_bytes, 4);
    return;
  }
  if (bad_crc_ && earlier_copy_pending) return;  // Keep waiting; the ACK timer runs on.
  // An ACK for an earlier copy settles a resend still queued behind a reply.
  frame_queued_ = false;
  awaiting_ack_ = false;
  cancel_timer();
  // The log names packets whose records a correct gateway stored; an ACKed corrupted
  // frame is the gateway's fault and bad_crc_acked reports it.
  const bool acked_corrupted = bad_crc_;
  if (bad_crc_) {
    // A correct gateway never ACKs a frame whose CRC is wrong; the device cannot tell
    // and drops the records, so the packet counts as delivered.
    bad_crc_ = false;
    bump(env_.counters.bad_crc_acked);
  } else if (count != records_in_frame_) {
    // "If sent data number and reported by server doesn't match module resends."
    bump(env_.counters.ack_mismatches);
    bump(env_.counters.resends);
    queue_frame();
    return;
  } else {
    const auto latency = std::chrono::steady_clock::now() - sent_at_;
    env_.counters.ack_latency.record(latency);
    env_.counters.ack_latency_interval.record(latency);
  }
  if (env_.acked != nullptr && !acked_corrupted)
    env_.acked->write(imei_, first_ts_, last_ts_, records_in_frame_);
  has_packet_ = false;
  bump(env_.counters.packets_acked);
  bump(env_.counters.records_acked, records_in_frame_);
  ++acked_packets_;
  const std::uint64_t limit = env_.options.packets_per_device;
  if (limit != 0 && acked_packets_ >= limit) {
    bump(env_.counters.devices_finished);
    finish();
    return;
  }
  arm_timer(timer_purpose::next_packet,
            next_packet_delay(env_.options, period_start_, std::chrono::steady_clock::now()));
}

void simulated_device::on_ack_timeout() {
  if (frame_in_write_) {
    // The gateway is not even reading: the packet has not left, so there is nothing
    // to resend yet.
    bump(env_.counters.ack_timeouts);
    arm_timer(timer_purpose::ack, env_.options.ack_timeout);
    return;
  }
  const std::size_t available = rx_end_ - rx_begin_;
  if (tcp() && available >= 4 && available < 9 && codecs::load_be32(rx_.data() + rx_begin_) == 0) {
    // Four zero bytes and nothing since that makes them a command's preamble: an ACK
    // of zero records (a "NACK"), which process_input() could not tell apart yet.
    rx_begin_ += 4;
    on_ack(0);
    return;
  }
  if (bad_crc_) {
    // The expected outcome: no ACK for the corrupted packet. Now send it intact.
    bad_crc_ = false;
    fix_crc_pending_ = true;
    bump(env_.counters.bad_crc_unacked);
    queue_frame();
    return;
  }
  spdlog::debug("device {}: no ACK within {} ms, resending", imei_.str(),
                env_.options.ack_timeout.count());
  bump(env_.counters.ack_timeouts);
  bump(env_.counters.resends);
  queue_frame();
}

}  // namespace tgw::infra::sim
