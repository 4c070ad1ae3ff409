#include "infra/sim/simulated_device.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include "infra/text/human_time.hpp"

namespace tgw::infra::sim {

namespace {

using boost::system::error_code;
using std::chrono::milliseconds;

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
  motion_ = env.generator.start(index, seed, static_cast<std::uint64_t>(now_ms()));
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

}  // namespace tgw::infra::sim
