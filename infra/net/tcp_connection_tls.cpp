// The TLS handshake of a connection: its ClientHello whole in the kernel, a slot of the
// handshake gate, then the handshake driven on the connection's io thread.
#include "infra/net/tcp_connection.hpp"

#include <array>
#include <exception>
#include <string>

namespace tgw::infra::net {
namespace {

// TLS records start with a 5-byte header: content type, version, length. The first
// record of a TLS client is a handshake record (type 22) of at most 2^14 bytes.
constexpr std::size_t tls_record_header = 5;
constexpr std::uint8_t tls_handshake_record = 22;
constexpr std::size_t tls_max_plaintext = 16384;

}  // namespace

// TLS: the device's first record, its ClientHello, whole in the socket before an SSL
// object and a slot of the handshake gate are spent on it. Until then the bytes stay
// in the kernel, peeked at, so a client that connects and says nothing, or drips its
// ClientHello a byte at a time, holds no slot that a device ready to talk waits for.
// Bytes that are no TLS handshake record go to OpenSSL at once, which refuses them
// with its own reason and alert.
void tcp_connection::await_client_hello() {
  std::array<std::uint8_t, tls_record_header> head{};
  const std::size_t n = peek(head, "TLS handshake");
  if (n == 0) return;
  first_byte_ = true;
  std::size_t needed = tls_record_header;
  if (n == tls_record_header) {
    const std::size_t length = std::size_t{head[3]} << 8 | head[4];
    needed = length <= tls_max_plaintext ? tls_record_header + length : 0;
  }
  boost::system::error_code ec;
  if (head[0] != tls_handshake_record || needed == 0 || socket_.available(ec) >= needed) {
    if (ec) {
      shutdown("read failed: " + ec.message());
      return;
    }
    if (lower_watermark()) enter_handshake_gate();
    return;
  }
  if (peer_hung_up())
    shutdown("peer closed before its TLS ClientHello was complete");
  else
    wait_for_bytes(needed);
}

void tcp_connection::enter_handshake_gate() {
  phase_ = phase::tls;
  const auto& gate = settings_->security.handshakes;
  if (!gate) {
    begin_tls();
    return;
  }
  const auto start = [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return false;
    asio::post(self->executor(), [self] { self->begin_tls(); });
    return true;
  };
  const auto evict = [weak = weak_from_this()](handshake_gate::eviction why) {
    if (auto self = weak.lock()) asio::post(self->executor(), [self, why] { self->evicted(why); });
  };
  // Otherwise it waits for a slot; the handshake timeout runs meanwhile.
  holds_gate_ = gate->enter(address_key(), start, evict, gate_ticket_);
  if (holds_gate_) begin_tls();
}

// The gate took the slot back: its handshake waited on the device too long, or while
// another address waited for a slot.
void tcp_connection::evicted(handshake_gate::eviction why) {
  if (closed_) return;
  const auto step = settings_->security.handshakes->config().step_timeout;
  if (why == handshake_gate::eviction::stalled)
    refuse(metrics::refusal::tls_stalled, "TLS handshake stalled: the device sent nothing for " +
                                              std::to_string(step.count()) +
                                              " ms (--tls-step-timeout-ms)");
  else
    refuse(metrics::refusal::tls_preempted,
           "TLS handshake preempted: it waited on the device while another address waited "
           "for a slot (--tls-handshakes)");
}

// With a slot of the handshake gate, if there is one.
void tcp_connection::begin_tls() {
  holds_gate_ = settings_->security.handshakes != nullptr;
  if (closed_) {
    leave_gate();
    return;
  }
  const auto context = settings_->security.tls->current();
  try {
    tls_ = std::make_unique<tls_channel>(*context, socket_.native_handle());
  } catch (const std::exception& e) {
    shutdown(e.what());
    return;
  }
  continue_handshake();
}

void tcp_connection::leave_gate() {
  if (gate_ticket_ == 0) return;
  settings_->security.handshakes->leave(gate_ticket_);
  gate_ticket_ = 0;
  holds_gate_ = false;
}

void tcp_connection::continue_handshake() {
  const auto& gate = settings_->security.handshakes;
  // The step's wait on the device is over: the gate keeps working handshakes.
  if (holds_gate_) gate->waiting_on_peer(gate_ticket_, false);
  std::string error;
  const tls_result r = tls_->handshake(error);
  switch (r.status) {
    case tls_status::done:
      if (settings_->alive)
        server_.counters_.tls_established.fetch_add(1, std::memory_order_relaxed);
      leave_gate();
      begin_framing();
      return;
    case tls_status::want_read:
    case tls_status::want_write:
      if (holds_gate_) gate->waiting_on_peer(gate_ticket_, true);
      wait_socket(r.status == tls_status::want_read ? tcp::socket::wait_read
                                                    : tcp::socket::wait_write);
      return;
    case tls_status::closed:
      if (settings_->alive) server_.counters_.tls_failed.fetch_add(1, std::memory_order_relaxed);
      refuse(metrics::refusal::tls_failed, "peer closed during the TLS handshake");
      return;
    case tls_status::failed:
      if (settings_->alive) server_.counters_.tls_failed.fetch_add(1, std::memory_order_relaxed);
      // Plain device bytes start with 00 0F (the IMEI length), no TLS record.
      refuse(metrics::refusal::tls_failed, "TLS handshake failed: " + error +
                                               (error.find("wrong version") != std::string::npos ||
                                                        error.find("record") != std::string::npos ||
                                                        error.find("http") != std::string::npos
                                                    ? " (plain TCP on the TLS port?)"
                                                    : ""));
      return;
  }
}

}  // namespace tgw::infra::net
