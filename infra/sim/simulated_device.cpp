#include "infra/sim/simulated_device.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/command.hpp"

namespace tgw::infra::sim {

namespace {

using boost::system::error_code;
using std::chrono::milliseconds;

// Bytes a device reads into at first; a command reply needs more and grows it.
constexpr std::size_t initial_rx = 64;
// Server frames above this size are junk for a tracker: no command is that long.
constexpr std::size_t max_rx = std::size_t{64} * 1024;
// Codec id, quantity, type, size and quantity: the smallest command data length.
constexpr std::uint32_t min_command_data = 8;

std::uint64_t wall_clock_ms() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// The reply text with "{command}" replaced by the command's text.
void expand_reply(std::string_view pattern, std::string_view command, std::string& out) {
  constexpr std::string_view placeholder = "{command}";
  out.clear();
  std::size_t from = 0;
  for (std::size_t at = pattern.find(placeholder); at != std::string_view::npos;
       at = pattern.find(placeholder, from)) {
    out.append(pattern.substr(from, at - from));
    out.append(command);
    from = at + placeholder.size();
  }
  out.append(pattern.substr(from));
}

}  // namespace

simulated_device::simulated_device(net::asio::io_context& io, const device_environment& env,
                                   std::size_t index, const codecs::imei& id)
    : env_(env),
      executor_(io.get_executor()),
      tcp_(executor_),
      udp_(executor_),
      timer_(executor_),
      reply_timer_(executor_),
      index_(static_cast<std::uint32_t>(index)),
      imei_(id) {
  const std::uint64_t seed = env.options.seed;
  motion_ = env.generator.start(index, seed, wall_clock_ms());
  udp_packet_id_ = static_cast<std::uint16_t>(next_random(motion_.rng));
}

void simulated_device::start(milliseconds delay) {
  net::asio::post(executor_, [this, delay] {
    if (phase_ == phase::idle) arm_timer(timer_purpose::connect, delay);
  });
}

void simulated_device::stop() {
  net::asio::post(executor_, [this] { finish(); });
}

// --- timers -----------------------------------------------------------------------

void simulated_device::arm_timer(timer_purpose purpose, milliseconds delay) {
  purpose_ = purpose;
  timer_.expires_after(delay);
  timer_.async_wait([this, seq = ++timer_seq_](const error_code& ec) {
    if (ec || seq != timer_seq_ || phase_ == phase::done) return;
    on_timer();
  });
}

void simulated_device::cancel_timer() {
  ++timer_seq_;
  timer_.cancel();
}

void simulated_device::on_timer() {
  switch (purpose_) {
    case timer_purpose::connect:
      open_connection();
      break;
    case timer_purpose::connect_timeout:
      // No connection or no verdict in time: a tracker gives up on the socket.
      bump(env_.counters.handshake_timeouts);
      drop_connection(false);
      break;
    case timer_purpose::ack:
      on_ack_timeout();
      break;
    case timer_purpose::next_packet:
      send_new_packet();
      break;
  }
}

milliseconds simulated_device::backoff() noexcept {
  const auto& o = env_.options;
  const unsigned doublings = std::min<unsigned>(backoff_attempts_, 20);
  auto delay = o.reconnect_delay * (std::int64_t{1} << doublings);
  delay = std::min(delay, o.reconnect_max_delay);
  if (backoff_attempts_ < 255) ++backoff_attempts_;
  // Half to all of the delay, so a fleet cut off at once does not come back at once.
  const double share = 0.5 + 0.5 * next_unit(motion_.rng);
  return milliseconds{static_cast<std::int64_t>(static_cast<double>(delay.count()) * share)};
}

// --- connection -------------------------------------------------------------------

void simulated_device::open_connection() {
  if (!tcp()) {
    open_udp();
    return;
  }
  phase_ = phase::connecting;
  error_code ec;
  tcp_.open(env_.tcp_target.protocol(), ec);
  if (!ec && env_.options.source_spread > 0) {
    // Without this, bind() picks the port for any destination, and the ports of one
    // address run out at about 28,000 sockets; with it, connect() picks the port.
    int one = 1;
    ::setsockopt(tcp_.native_handle(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    const net::asio::ip::address_v4 source(
        spread_source_address(index_, env_.options.source_spread));
    tcp_.bind(net::tcp::endpoint(source, 0), ec);
  }
  if (ec) {
    connect_failed(ec);
    return;
  }
  arm_timer(timer_purpose::connect_timeout, env_.options.ack_timeout);
  tcp_.async_connect(env_.tcp_target,
                     [this, seq = conn_seq_](const error_code& e) { on_connect(seq, e); });
}

void simulated_device::open_udp() {
  error_code ec;
  udp_.open(env_.udp_target.protocol(), ec);
  if (!ec && env_.options.source_spread > 0) {
    const net::asio::ip::address_v4 source(
        spread_source_address(index_, env_.options.source_spread));
    udp_.bind(net::udp::endpoint(source, 0), ec);
  }
  if (!ec) udp_.connect(env_.udp_target, ec);
  if (ec) {
    connect_failed(ec);
    return;
  }
  bump(env_.counters.connects);
  env_.counters.connected.fetch_add(1, std::memory_order_relaxed);
  connected_ = true;
  phase_ = phase::ready;
  start_receive();
  if (has_packet_) {
    bump(env_.counters.resends);
    queue_frame();
  } else {
    send_new_packet();
  }
}

void simulated_device::on_connect(std::uint32_t seq, const error_code& ec) {
  if (seq != conn_seq_ || phase_ != phase::connecting) return;
  if (ec) {
    connect_failed(ec);
    return;
  }
  error_code ignored;
  tcp_.set_option(net::tcp::no_delay(true), ignored);
  if (env_.tls != nullptr) {
    tls_ = std::make_unique<net::tls_channel>(env_.tls->native_handle(), tcp_.native_handle(),
                                              net::tls_channel::role::client);
    continue_tls_handshake(seq);
    return;
  }
  begin_session();
}

void simulated_device::continue_tls_handshake(std::uint32_t seq) {
  if (seq != conn_seq_ || phase_ != phase::connecting) return;
  std::string error;
  const net::tls_result r = tls_->handshake(error);
  switch (r.status) {
    case net::tls_status::done:
      begin_session();
      return;
    case net::tls_status::want_read:
    case net::tls_status::want_write:
      tcp_.async_wait(
          r.status == net::tls_status::want_read ? tcp_socket::wait_read : tcp_socket::wait_write,
          [this, seq](const error_code& ec) {
            if (seq != conn_seq_) return;
            if (ec) {
              connect_failed(ec);
              return;
            }
            continue_tls_handshake(seq);
          });
      return;
    case net::tls_status::closed:
    case net::tls_status::failed:
      tls_failed(error.empty() ? "the gateway closed the connection" : error);
      return;
  }
}

void simulated_device::tls_failed(const std::string& why) {
  // Said once at warn: a fleet pointed at a plain port fails every handshake alike.
  static std::atomic<bool> told{false};
  if (!told.exchange(true))
    spdlog::warn("device {}: TLS handshake failed: {} (counted as a connect failure)", imei_.str(),
                 why);
  connect_failed(net::asio::error::connection_aborted);
}

// The connection is up (TLS included): count it and send the IMEI.
void simulated_device::begin_session() {
  bump(env_.counters.connects);
  env_.counters.connected.fetch_add(1, std::memory_order_relaxed);
  connected_ = true;
  phase_ = phase::handshaking;
  rx_begin_ = rx_end_ = 0;
  codecs::encode_imei_packet(imei_, control_);
  start_read();
  flush();
}

void simulated_device::connect_failed(const error_code& ec) {
  spdlog::debug("device {}: cannot connect to {}: {}", imei_.str(), env_.options.target_host,
                ec.message());
  bump(env_.counters.connect_failures);
  close_socket();
  schedule_reconnect();
}

void simulated_device::close_socket() {
  error_code ignored;
  tls_.reset();
  if (tcp_.is_open()) tcp_.close(ignored);
  if (udp_.is_open()) udp_.close(ignored);
  ++conn_seq_;
  if (connected_) {
    env_.counters.connected.fetch_sub(1, std::memory_order_relaxed);
    connected_ = false;
  }
  // Replies belong to the connection their command came on.
  control_.clear();
  delayed_.clear();
  if (reply_timer_armed_) {
    reply_timer_armed_ = false;
    reply_timer_.cancel();
  }
  rx_begin_ = rx_end_ = 0;
  frame_queued_ = false;
  awaiting_ack_ = false;
  outstanding_acks_ = 0;
}

void simulated_device::drop_connection(bool count_disconnect) {
  if (count_disconnect) {
    bump(env_.counters.disconnects);
    spdlog::debug("device {}: connection lost", imei_.str());
  }
  if (bad_crc_) {
    // The gateway dropped the corrupted packet without an ACK, as it should; the
    // device sends the correct one after it reconnects.
    bad_crc_ = false;
    fix_crc_pending_ = true;
    bump(env_.counters.bad_crc_unacked);
  }
  cancel_timer();
  close_socket();
  schedule_reconnect();
}

void simulated_device::schedule_reconnect() {
  if (!env_.options.reconnect) {
    finish();
    return;
  }
  phase_ = phase::idle;
  arm_timer(timer_purpose::connect, backoff());
}

void simulated_device::finish() {
  if (phase_ == phase::done) return;
  if (has_packet_) bump(env_.counters.packets_unacked);
  cancel_timer();
  close_socket();
  phase_ = phase::done;
  env_.on_finished();
}

// --- input ------------------------------------------------------------------------

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

// Reads what OpenSSL has or the socket brings; the result goes to on_read, posted, as
// an Asio read's would be.
void simulated_device::tls_read(std::uint32_t seq) {
  if (seq != conn_seq_ || !tls_) return;
  std::string error;
  const net::tls_result r =
      tls_->read(std::span(rx_.data() + rx_end_, rx_.size() - rx_end_), error);
  switch (r.status) {
    case net::tls_status::done:
      net::asio::post(executor_, [this, seq, n = r.bytes] { on_read(seq, {}, n); });
      return;
    case net::tls_status::want_read:
    case net::tls_status::want_write:
      if (r.status == net::tls_status::want_read) tls_->release_buffers();
      tcp_.async_wait(
          r.status == net::tls_status::want_read ? tcp_socket::wait_read : tcp_socket::wait_write,
          [this, seq](const error_code& ec) {
            if (seq != conn_seq_) return;
            if (ec)
              on_read(seq, ec, 0);
            else
              tls_read(seq);
          });
      return;
    case net::tls_status::closed:
    case net::tls_status::failed:
      net::asio::post(executor_,
                      [this, seq] { on_read(seq, net::asio::error::connection_reset, 0); });
      return;
  }
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

void simulated_device::on_command(std::span<const std::uint8_t> frame) {
  codecs::command_message message;
  const codecs::decode_status status = codecs::decode_command_frame(frame, message);
  const bool command = status.ok() && message.type == codecs::message_type::command &&
                       (message.codec == 0x0C || message.codec == 0x0E);
  if (!command) {
    bump(env_.counters.commands_invalid);
    return;
  }
  bump(env_.counters.commands_received);
  const double ignore = env_.options.ignore_command_share;
  if (ignore > 0.0 && next_unit(motion_.rng) < ignore) {
    bump(env_.counters.commands_ignored);
    return;
  }
  // Commands are rare next to packets, so building the text may allocate.
  std::string text;
  expand_reply(env_.options.reply_text, message.payload_text(), text);
  codecs::command_fields reply;
  reply.type = codecs::message_type::response;
  reply.payload = codecs::as_bytes(text);
  if (message.codec == 0x0E) {
    reply.codec = codecs::codec_id::codec14;
    reply.device = imei_;
    if (!(message.device == imei_)) {
      // Codec 14 addressed to another IMEI: nACK with our IMEI and no payload.
      reply.type = codecs::message_type::nack;
      reply.payload = {};
    }
  }
  const bool delay = env_.options.reply_delay.count() > 0;
  if (codecs::encode_command_frame(reply, delay ? delayed_ : control_) != codecs::errc::ok) {
    bump(env_.counters.commands_invalid);
    return;
  }
  bump(reply.type == codecs::message_type::nack ? env_.counters.commands_nacked
                                                : env_.counters.commands_replied);
  if (!delay) {
    flush();
  } else if (!reply_timer_armed_) {
    // Replies that arrive while one waits go out with it.
    reply_timer_armed_ = true;
    reply_timer_.expires_after(env_.options.reply_delay);
    reply_timer_.async_wait([this, seq = conn_seq_](const error_code& ec) {
      if (ec || seq != conn_seq_ || phase_ == phase::done) return;
      release_delayed_replies();
    });
  }
}

void simulated_device::release_delayed_replies() {
  reply_timer_armed_ = false;
  control_.insert(control_.end(), delayed_.begin(), delayed_.end());
  delayed_.clear();
  flush();
}

// --- output -----------------------------------------------------------------------

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
  const auto records = env_.generator.next(motion_, wall_clock_ms());
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

// OpenSSL takes all the bytes or asks to be called again with the same ones.
void simulated_device::tls_write(std::uint32_t seq, std::span<const std::uint8_t> bytes) {
  std::string error;
  const net::tls_result r = tls_ ? tls_->write(bytes, error) : net::tls_result{};
  switch (r.status) {
    case net::tls_status::done:
      net::asio::post(executor_, [this, seq] { on_written(seq, {}); });
      return;
    case net::tls_status::want_read:
    case net::tls_status::want_write:
      tcp_.async_wait(
          r.status == net::tls_status::want_write ? tcp_socket::wait_write : tcp_socket::wait_read,
          [this, seq, bytes](const error_code& ec) {
            if (seq != conn_seq_ || ec) {
              on_written(seq, ec ? ec : net::asio::error::operation_aborted);
              return;
            }
            tls_write(seq, bytes);
          });
      return;
    case net::tls_status::closed:
    case net::tls_status::failed:
      net::asio::post(executor_,
                      [this, seq] { on_written(seq, net::asio::error::connection_reset); });
      return;
  }
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
