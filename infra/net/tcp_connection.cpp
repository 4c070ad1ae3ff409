// A device connection's life cycle: start, the calls of the session layer, the
// deadlines the sweep enforces, and the close.
#include "infra/net/tcp_connection.hpp"

#include <algorithm>
#include <string>

#include <spdlog/spdlog.h>

namespace tgw::infra::net {
namespace {

ip_endpoint to_ip_endpoint(const tcp::endpoint& e) {
  ip_endpoint out;
  out.port = e.port();
  auto address = e.address();
  // A dual-stack listener sees IPv4 devices as v4-mapped; they are recorded as IPv4.
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  if (address.is_v4()) {
    const auto b = address.to_v4().to_bytes();
    std::copy(b.begin(), b.end(), out.address.begin());
  } else {
    const auto b = address.to_v6().to_bytes();
    std::copy(b.begin(), b.end(), out.address.begin());
    out.v6 = true;
  }
  return out;
}

}  // namespace

tcp_connection::tcp_connection(tcp_server& server, connection_socket socket,
                               connection_sweep& sweep)
    : server_(server),
      settings_(server.settings_),
      sweep_(&sweep),
      socket_(std::move(socket)),
      framer_(settings_->limits.max_frame_size, true) {
  boost::system::error_code ec;
  const auto remote = socket_.remote_endpoint(ec);
  if (!ec) {
    device_ = to_ip_endpoint(remote);
    device_known_ = true;
  }
  const auto local = socket_.local_endpoint(ec);
  if (!ec) gateway_ = to_ip_endpoint(local);
  known_endpoints_ = device_known_ && !ec;
  socket_.set_option(tcp::no_delay(true), ec);
  socket_.non_blocking(true, ec);
}

void tcp_connection::start() {
  asio::post(executor(), [self = shared_from_this()]() mutable {
    if (self->closed_ || !self->settings_->alive) return;
    self->sweep_->add(self);
    if (self->settings_->security.proxy == proxy_mode::off) {
      self->after_proxy();
      return;
    }
    if (!self->from_balancer()) {
      self->server_.counters_.refused_proxy_source.fetch_add(1, std::memory_order_relaxed);
      self->shutdown("PROXY protocol: " + self->peer() + " is not in --proxy-from");
      return;
    }
    self->phase_ = phase::proxy;
    self->wait_socket(tcp::socket::wait_read);
  });
}

void tcp_connection::send(std::vector<std::uint8_t> bytes) {
  asio::post(executor(), [self = shared_from_this(), b = std::move(bytes)]() mutable {
    self->queue_write(std::move(b));
  });
}

void tcp_connection::close(std::string reason) {
  asio::post(executor(), [self = shared_from_this(), r = std::move(reason)]() mutable {
    if (self->closed_) return;
    if (self->writing_) {
      self->close_after_writes_ = std::make_unique<std::string>(std::move(r));
    } else {
      self->shutdown(r);
    }
  });
}

void tcp_connection::frame_done() {
  asio::post(executor(), [self = shared_from_this()] { self->finish_frame(); });
}

void tcp_connection::answer_frame(std::vector<std::uint8_t> reply) {
  asio::post(executor(), [self = shared_from_this(), b = std::move(reply)]() mutable {
    self->queue_write(std::move(b));
    self->finish_frame();
  });
}

void tcp_connection::abort(const std::string& reason) {
  asio::post(executor(), [self = shared_from_this(), reason] { self->shutdown(reason); });
}

// For the sweep of its io context: closes the connection if its deadline passed.
// The first byte's and the handshake's count from the start, the idle timeout from
// the last read.
bool tcp_connection::close_if_past_deadline(std::chrono::steady_clock::time_point now) {
  if (closed_) return false;
  if (!identified_) {
    if (!first_byte_ && now >= last_read_ + settings_->limits.first_byte_timeout) {
      shutdown(phase_ == phase::proxy ? "first-byte timeout (no PROXY header)"
                                      : "first-byte timeout (the device sent nothing)");
      return true;
    }
    if (now < last_read_ + settings_->limits.handshake_timeout) return false;
    shutdown(phase_ == phase::proxy   ? "handshake timeout (no PROXY header)"
             : phase_ == phase::hello ? "handshake timeout (TLS ClientHello incomplete)"
             : phase_ == phase::tls   ? "handshake timeout (TLS)"
                                      : "handshake timeout");
    return true;
  }
  if (now < last_read_ + settings_->limits.idle_timeout) return false;
  shutdown("idle timeout");
  return true;
}

void tcp_connection::shutdown(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  release_limit();
  leave_gate();
  boost::system::error_code ec;
  // The sweep held the connection; it lives to the end of this function.
  const auto held = settings_->alive ? sweep_->remove(this) : nullptr;
  if (tls_) {
    // The socket closes next either way; a close_notify that did not go out is
    // only worth a line when debugging a device.
    std::string why;
    const tls_result r = tls_->shutdown(why);
    if (r.status == tls_status::want_write || r.status == tls_status::failed)
      spdlog::debug("connection from {}: close_notify not sent: {}", peer(),
                    r.status == tls_status::failed ? why : "socket full");
  }
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  // A write in flight still reads its buffer; the write handler frees it.
  if (!writing_) writes_.clear();
  if (capture_) capture_->recorder->close(capture_->id, reason == "peer closed");
  if (listener_) {
    listener_->on_closed(reason);
    listener_.reset();  // breaks the cycle session -> link -> listener -> session
  }
  if (!identified_ && reason != "shutdown") {
    // No device was identified, so no session has anything to say: the outcome of
    // the preamble, or of a TLS session that ended before the IMEI, is told here.
    spdlog::info("connection from {}{}: closed before its handshake: {}", peer(),
                 via_ ? " via " + *via_ : "", reason);
  }
  if (settings_->alive) server_.forget(this);
}

}  // namespace tgw::infra::net
