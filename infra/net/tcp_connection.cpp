// A device connection's life cycle: start, the calls of the session layer, the
// deadlines the sweep enforces, and the close.
#include "infra/net/tcp_connection.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

#include "infra/log/refusal_log.hpp"
#include "infra/net/asio_endpoint.hpp"

namespace tgw::infra::net {
namespace {

// Keepalive probes find a device that vanished (power lost, out of coverage, a NAT
// that forgot it) long before the idle timeout, which is the device's own silence.
void keep_alive(connection_socket& socket, std::chrono::seconds idle) {
  if (idle.count() <= 0) return;
  const int fd = socket.native_handle();
  const int on = 1;
  const int first = static_cast<int>(idle.count());
  const int every = std::max(1, first / 10);
  const int probes = 5;
  // A socket that refuses an option keeps the idle timeout, which still closes it; the
  // refusal is said (within a budget), as a vanished device then holds its slot longer.
  const bool set = ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == 0 &&
                   ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &first, sizeof first) == 0 &&
                   ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &every, sizeof every) == 0 &&
                   ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) == 0;
  if (!set) {
    static log_budget budget{"tcp keepalive refused", log_kind::refusal};
    budget.log(spdlog::level::warn,
               "device port: TCP keepalive could not be set on a connection ({}); a device "
               "that vanishes holds its slot until --idle-timeout-s",
               std::string(std::strerror(errno)));
  }
}

// Lines about connections that never got as far as an IMEI, whatever ended them.
log_budget& closed_early_log() {
  static log_budget budget{"connection closed before its handshake", log_kind::refusal};
  return budget;
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
  keep_alive(socket_, settings_->limits.tcp_keepalive);
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
      self->refuse(metrics::refusal::proxy_source,
                   "PROXY protocol: " + self->peer() + " is not in --proxy-from");
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
  if (!guard_.identified()) {
    if (!first_byte_ && now >= last_read_ + settings_->limits.first_byte_timeout) {
      refuse(metrics::refusal::first_byte_timeout,
             phase_ == phase::proxy ? "first-byte timeout (no PROXY header)"
                                    : "first-byte timeout (the device sent nothing)");
      return true;
    }
    if (now < last_read_ + settings_->limits.handshake_timeout) return false;
    refuse(metrics::refusal::handshake_timeout,
           phase_ == phase::proxy   ? "handshake timeout (no PROXY header)"
           : phase_ == phase::hello ? "handshake timeout (TLS ClientHello incomplete)"
           : phase_ == phase::tls   ? "handshake timeout (TLS)"
                                    : "handshake timeout");
    return true;
  }
  if (now < last_read_ + settings_->limits.idle_timeout) return false;
  shutdown("idle timeout");
  return true;
}

void tcp_connection::count(metrics::refusal why) const {
  if (settings_->alive && settings_->security.refusals) settings_->security.refusals->count(why);
}

void tcp_connection::refuse(metrics::refusal why, const std::string& reason) {
  if (closed_) return;
  count(why);
  // Told here whatever the phase: after the IMEI the session's line says only that the
  // device left, not which budget it spent.
  refusal_log(why).log(spdlog::level::info, "connection from {}{}: {}{}", peer(),
                       via_ ? " via " + *via_ : "",
                       guard_.identified() ? "" : "closed before its handshake: ", reason);
  shutdown(reason, true);
}

void tcp_connection::shutdown(const std::string& reason, bool told) {
  if (closed_) return;
  closed_ = true;
  release_limit();
  if (holds_session_) {
    settings_->security.limits->session_over(address_key());
    holds_session_ = false;
  }
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
  if (!guard_.identified() && reason != "shutdown" && !told) {
    // No device was identified, so no session has anything to say: the outcome of
    // the preamble, or of a TLS session that ended before the IMEI, is told here.
    closed_early_log().log(spdlog::level::info,
                           "connection from {}{}: closed before its handshake: {}", peer(),
                           via_ ? " via " + *via_ : "", reason);
  }
  if (settings_->alive) server_.forget(this);
}

}  // namespace tgw::infra::net
