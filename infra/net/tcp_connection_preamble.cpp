// The steps before a connection's first frame that need no TLS: the balancer's PROXY
// header, the per-address limits, and the start of framing once the preamble is done.
#include "infra/net/tcp_connection.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "infra/net/proxy_header.hpp"

namespace tgw::infra::net {

bool tcp_connection::from_balancer() const {
  return device_known_ &&
         std::ranges::any_of(settings_->security.proxy_from,
                             [&](const ip_prefix& p) { return p.contains(device_); });
}

// Only what an operator named (--trusted-sources) is exempt from the per-address
// limits. Not loopback by itself: a forwarder on the host (a balancer without PROXY
// protocol, a tunnel) would bring the whole internet in under 127.0.0.1; nor a PROXY
// LOCAL or UNKNOWN header, which names no one and counts under the balancer.
bool tcp_connection::trusted() const {
  return device_known_ && std::ranges::any_of(settings_->security.trusted, [&](const ip_prefix& p) {
           return p.contains(device_);
         });
}

// From the session's thread: address_limits is thread-safe, and the address does not
// change once a session exists.
bool tcp_connection::admit_new_device() {
  const auto& limits = settings_->security.limits;
  if (!limits || trusted()) return true;
  return limits->new_device(address_key());
}

std::string tcp_connection::address_key() const {
  const auto& limits = settings_->security.limits;
  if (limits) return limits->key_of(device_);
  const ip_endpoint a = unmapped(device_);
  return std::string(reinterpret_cast<const char*>(a.address.data()), a.v6 ? 16 : 4);
}

// Waits until the socket holds at least `n` bytes, or the peer hangs up. A wait for
// readability alone would end at once while bytes peeked before are still there
// (Asio re-arms the descriptor, and epoll reports unread bytes again), and the
// connection would spin; with SO_RCVLOWAT the kernel wakes it only when the bytes
// it needs are in, so a peer dripping them a byte at a time costs no wake-ups.
void tcp_connection::wait_for_bytes(std::size_t n) {
  boost::system::error_code ec;
  socket_.set_option(asio::socket_base::receive_low_watermark(static_cast<int>(n)), ec);
  if (ec) {
    shutdown("cannot wait for " + std::to_string(n) + " bytes: " + ec.message());
    return;
  }
  raised_low_watermark_ = n > 1;
  wait_socket(tcp::socket::wait_read);
}

// Back to waking on every byte, for the steps that read rather than peek.
bool tcp_connection::lower_watermark() {
  if (!raised_low_watermark_) return true;
  boost::system::error_code ec;
  socket_.set_option(asio::socket_base::receive_low_watermark(1), ec);
  if (ec) {
    shutdown("cannot reset the socket's receive low-water mark: " + ec.message());
    return false;
  }
  raised_low_watermark_ = false;
  return true;
}

// Peeks at the bytes the socket holds: how many there are, or 0 when there are none
// yet (a wait is started) or the connection ended before `what` came.
std::size_t tcp_connection::peek(std::span<std::uint8_t> into, const char* what) {
  boost::system::error_code ec;
  const std::size_t n =
      socket_.receive(asio::buffer(into.data(), into.size()), tcp::socket::message_peek, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    wait_socket(tcp::socket::wait_read);
    return 0;
  }
  if (ec || n == 0) {
    shutdown(ec ? "read failed: " + ec.message() : std::string("peer closed before its ") + what);
    return 0;
  }
  return n;
}

// Whether the peer has shut its side down (or the socket failed): a wait for more
// bytes than it holds would then never end.
bool tcp_connection::peer_hung_up() {
  pollfd p{socket_.native_handle(), POLLRDHUP, 0};
  return ::poll(&p, 1, 0) != 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void tcp_connection::read_proxy_header() {
  std::array<std::uint8_t, max_proxy_header> head{};
  const std::size_t n = peek(head, "PROXY header");
  if (n == 0) return;
  const proxy_parse p = parse_proxy_header(std::span(head).first(n), settings_->security.proxy);
  if (p.status == proxy_status::need_more) {
    // Peeked bytes stay in the socket: wait for one more.
    if (peer_hung_up())
      shutdown("peer closed before its PROXY header was complete");
    else
      wait_for_bytes(n + 1);
    return;
  }
  if (p.status == proxy_status::error) {
    if (settings_->alive) server_.counters_.refused_proxy.fetch_add(1, std::memory_order_relaxed);
    refuse(metrics::refusal::proxy_header, "PROXY protocol: " + p.error);
    return;
  }
  if (!lower_watermark()) return;
  // Take exactly the header: the device's first byte stays for the framer or TLS.
  boost::system::error_code ec;
  socket_.receive(asio::buffer(head.data(), p.length), 0, ec);
  if (ec) {
    shutdown("read failed: " + ec.message());
    return;
  }
  if (p.header.has_addresses) {
    via_ = std::make_unique<std::string>(peer());
    device_ = p.header.source;
    device_known_ = true;
    gateway_ = p.header.destination;
    known_endpoints_ = true;
  }
  after_proxy();
}

void tcp_connection::after_proxy() {
  const auto& limits = settings_->security.limits;
  if (limits && limits->enabled() && !trusted()) {
    const address_verdict v = limits->admit(limits->key_of(device_));
    holds_limit_ = v == address_verdict::admitted;
    if (!holds_limit_) {
      if (settings_->alive)
        server_.counters_.refused_address.fetch_add(1, std::memory_order_relaxed);
      if (v == address_verdict::over_rate)
        refuse(metrics::refusal::address_rate, "refused: too many new connections from " +
                                                   limits->describe(device_) +
                                                   " (--per-address-rate)");
      else
        refuse(metrics::refusal::address_handshakes,
               "refused: too many handshakes in progress from " + limits->describe(device_) +
                   " (--per-address-handshakes)");
      return;
    }
  }
  if (settings_->security.tls) {
    phase_ = phase::hello;
    await_client_hello();
    return;
  }
  begin_framing();
}

void tcp_connection::begin_framing() {
  phase_ = phase::framing;
  if (!settings_->alive) {
    shutdown("shutdown");
    return;
  }
  if (server_.capture_ && known_endpoints_) {
    const auto id = server_.capture_->open(device_, gateway_);
    capture_ = std::make_unique<captured>(captured{server_.capture_, id});
  }
  listener_ = server_.make_listener_(shared_from_this());
  if (tls_) {
    // A session holds only the bytes the device sent after its handshake; data the
    // handshake's last read brought along is read right away.
    unread_ = true;
  }
  wait_readable();
}

void tcp_connection::release_limit() {
  if (holds_limit_) {
    settings_->security.limits->handshake_over(settings_->security.limits->key_of(device_));
    holds_limit_ = false;
  }
}

}  // namespace tgw::infra::net
