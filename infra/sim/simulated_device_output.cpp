// What the simulated device sends: its AVL packets, built once and resent as they are,
// and the handshake and command replies queued before them.
#include "infra/sim/simulated_device.hpp"

#include <cstdint>
#include <limits>
#include <span>

#include <spdlog/spdlog.h>

#include "codecs/avl_encode.hpp"
#include "infra/text/human_time.hpp"

namespace tgw::infra::sim {

namespace {

using boost::system::error_code;

}  // namespace

void simulated_device::send_new_packet() {
  build_pending_ = true;
  queue_frame();
}

void simulated_device::queue_frame() {
  awaiting_ack_ = true;
  frame_queued_ = true;
  flush();
}

void simulated_device::build_packet() {
  const auto records = env_.generator.next(motion_, static_cast<std::uint64_t>(now_ms()));
  frame_.clear();
  codecs::errc result = codecs::errc::ok;
  if (tcp()) {
    result = codecs::encode_avl_frame(env_.generator.codec(), records, frame_);
  } else {
    ++udp_packet_id_;
    ++avl_packet_id_;
    result = codecs::encode_udp_datagram(udp_packet_id_, avl_packet_id_, imei_,
                                         env_.generator.codec(), records, frame_);
  }
  if (result != codecs::errc::ok) {
    // The options were validated, so this is a bug; stop rather than send junk.
    spdlog::error("device {}: cannot encode a packet: {}", imei_.str(), codecs::to_string(result));
    finish();
    return;
  }
  build_pending_ = false;
  has_packet_ = true;
  records_in_frame_ = static_cast<std::uint16_t>(records.size());
  first_ts_ = records.front().timestamp_ms;
  last_ts_ = records.back().timestamp_ms;
  bump(env_.counters.packets_sent);
  bump(env_.counters.records_sent, records.size());
  const double bad = env_.options.bad_crc_share;
  if (tcp() && bad > 0.0 && next_unit(motion_.rng) < bad) {
    frame_.back() ^= 0xFF;  // The low CRC byte: always a different, wrong CRC.
    bad_crc_ = true;
    bump(env_.counters.bad_crc_sent);
  }
}

void simulated_device::flush() {
  if (write_in_progress_) return;
  const std::uint32_t seq = conn_seq_;
  if (tcp() && !control_.empty() && (phase_ == phase::handshaking || phase_ == phase::ready)) {
    writing_.swap(control_);
    control_.clear();
    write_in_progress_ = true;
    write_bytes(seq, writing_);
    return;
  }
  if (!frame_queued_ || phase_ != phase::ready) return;
  // The frame buffer is only changed here, when no write can be reading it.
  if (build_pending_) {
    build_packet();
    if (phase_ == phase::done) return;
    period_start_ = std::chrono::steady_clock::now();
  }
  if (fix_crc_pending_) {
    frame_.back() ^= 0xFF;
    fix_crc_pending_ = false;
  }
  frame_queued_ = false;
  write_in_progress_ = true;
  frame_in_write_ = true;
  if (tcp() && !bad_crc_ && outstanding_acks_ < std::numeric_limits<std::uint16_t>::max())
    ++outstanding_acks_;
  sent_at_ = std::chrono::steady_clock::now();
  arm_timer(timer_purpose::ack, env_.options.ack_timeout);
  const auto done = [this, seq](const error_code& ec, std::size_t) { on_written(seq, ec); };
  if (tcp())
    write_bytes(seq, frame_);
  else
    udp_.async_send(net::asio::buffer(frame_), done);
}

// The buffer (writing_ or frame_) is left alone while write_in_progress_ holds.
void simulated_device::write_bytes(std::uint32_t seq, std::span<const std::uint8_t> bytes) {
  if (tls_) {
    tls_write(seq, bytes);
    return;
  }
  net::asio::async_write(tcp_, net::asio::buffer(bytes.data(), bytes.size()),
                         [this, seq](const error_code& ec, std::size_t) { on_written(seq, ec); });
}

void simulated_device::on_written(std::uint32_t seq, const error_code& ec) {
  write_in_progress_ = false;
  frame_in_write_ = false;
  writing_.clear();
  if (phase_ == phase::done) return;
  if (seq != conn_seq_) {
    flush();  // A newer connection may have bytes waiting for this write to end.
    return;
  }
  if (ec) {
    if (tcp()) {
      drop_connection(true);
      return;
    }
    // A UDP send error (ICMP, full buffer) loses the datagram; the ACK timeout resends.
  }
  flush();
}

}  // namespace tgw::infra::sim
