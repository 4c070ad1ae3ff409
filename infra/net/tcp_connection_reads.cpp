// A connection's reads: waiting for the device with no buffer held, reading what came,
// and handing complete frames to the session, within the frames-in-flight bound.
#include "infra/net/tcp_connection.hpp"

#include <string>

namespace tgw::infra::net {
namespace {

// Plain operator new and delete at the size asked, for an operation Asio would
// otherwise place in a recycled block of another operation's size.
template <class T>
struct exact_allocator {
  using value_type = T;
  exact_allocator() = default;
  template <class U>
  exact_allocator(const exact_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p); }
  template <class U>
  friend bool operator==(const exact_allocator&, const exact_allocator<U>&) noexcept {
    return true;
  }
};

// Why a read ended the connection, in the words the session journals.
std::string read_failure(const boost::system::error_code& ec) {
  if (ec == asio::error::eof) return "peer closed";
  if (ec == asio::error::operation_aborted) return "closed";
  return "read failed: " + ec.message();
}

}  // namespace

void tcp_connection::finish_frame() {
  guard_.frame_done();
  if (!closed_ && !reading_ && phase_ == phase::framing) wait_readable();
}

// An idle connection holds no receive buffer: a plain one waits with a read into its
// small landing area, a TLS one for readability, as OpenSSL reads the socket itself
// (and gives its buffers back while the device is quiet). Memory is taken only while
// bytes are in.
void tcp_connection::wait_readable() {
  if (closed_ || reading_ || !guard_.may_read(settings_->limits.max_frames_in_flight)) return;
  if (unread_) {
    // The socket is edge-triggered: bytes already there announce themselves no
    // more, so read them rather than wait. Posted, so other connections get a turn.
    reading_ = true;
    asio::post(executor(), [self = shared_from_this()] {
      self->reading_ = false;
      if (!self->closed_) self->read_available();
    });
    return;
  }
  if (tls_) {
    wait_socket(tcp::socket::wait_read);
  } else {
    receive_into_landing();
  }
}

// The completion of receive_into_landing's read. Its operation waits as long as the device is
// silent, so an idle connection holds it, and it is allocated at its own size (112
// bytes): Asio's per-thread recycling would give it the block of a larger operation
// that just finished, a write's, in the 160- or 224-byte class (docs/PERFORMANCE.md,
// "Idle memory"). An allocator of its own is what tells Asio not to recycle.
struct tcp_connection::landing_read {
  std::shared_ptr<tcp_connection> self;
  using allocator_type = exact_allocator<void>;
  [[nodiscard]] allocator_type get_allocator() const noexcept { return {}; }
  void operator()(const boost::system::error_code& ec, std::size_t n) const { self->landed(ec, n); }
};

// A read, not a readiness wait: Asio's reactor re-arms the descriptor with an
// epoll_ctl on every async_wait (a syscall per packet), whereas a read that is
// queued after the socket was found drained waits on the edge-triggered
// registration it already has. The landing area holds a 1-record packet whole; a
// larger one is read on from the socket into the framer.
void tcp_connection::receive_into_landing() {
  reading_ = true;
  socket_.async_read_some(asio::buffer(landing_), landing_read{shared_from_this()});
}

void tcp_connection::landed(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    shutdown(read_failure(ec));
    return;
  }
  const auto fresh = std::span<const std::uint8_t>(landing_).first(n);
  framer_.append(fresh);
  take_received(fresh, n == landing_.size());
}

// One readiness wait for whatever the phase needs next.
void tcp_connection::wait_socket(tcp::socket::wait_type direction) {
  if (closed_ || reading_) return;
  reading_ = true;
  socket_.async_wait(direction, [self = shared_from_this()](const boost::system::error_code& ec) {
    self->reading_ = false;
    if (self->closed_) return;
    if (ec) {
      self->shutdown(read_failure(ec));
      return;
    }
    switch (self->phase_) {
      case phase::proxy:
        self->read_proxy_header();
        break;
      case phase::hello:
        self->await_client_hello();
        break;
      case phase::tls:
        self->continue_handshake();
        break;
      case phase::framing:
        self->read_available();
        break;
    }
  });
}

// Reads what the socket (or the TLS session) has into the framer's space.
std::size_t tcp_connection::read_some(std::span<std::uint8_t> space, std::string& error,
                                      bool& would_block, bool& want_write) {
  would_block = want_write = false;
  if (tls_) {
    const tls_result r = tls_->read(space, error);
    switch (r.status) {
      case tls_status::done:
        return r.bytes;
      case tls_status::want_read:
        would_block = true;
        return 0;
      case tls_status::want_write:
        would_block = want_write = true;
        return 0;
      case tls_status::closed:
        error = "peer closed";
        return 0;
      case tls_status::failed:
        error = "TLS read failed: " + error;
        return 0;
    }
  }
  boost::system::error_code ec;
  const std::size_t n = socket_.read_some(asio::buffer(space.data(), space.size()), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    would_block = true;
    return 0;
  }
  if (ec) error = read_failure(ec);
  return n;
}

void tcp_connection::read_available() {
  // No FIONREAD to size the read: a syscall per packet for a figure the read itself
  // gives. Most packets fit this space; a larger frame takes a few reads.
  auto space = framer_.prepare(read_chunk);
  std::string error;
  bool would_block = false;
  bool want_write = false;
  const std::size_t n = read_some(space, error, would_block, want_write);
  if (would_block) {
    // A TLS read stops after one receive from the socket (infra/net/tls_channel.hpp):
    // one that did not empty it reads on in a later turn, after the other
    // connections of the thread.
    unread_ = tls_ && !want_write && !tls_->socket_drained();
    if (tls_ && !want_write && !unread_) tls_->release_buffers();
    if (want_write)
      wait_socket(tcp::socket::wait_write);
    else
      wait_readable();
    return;
  }
  if (!error.empty()) {
    shutdown(error);
    return;
  }
  framer_.commit(n);
  // A plain read that filled its space may have left bytes in the socket; a TLS
  // read knows whether OpenSSL holds more or the socket may.
  take_received(space.first(n), tls_ ? tls_->more_to_read() : n == space.size());
}

// `fresh` came in and is in the framer: record it, hand the complete frames on,
// and read or wait for more.
void tcp_connection::take_received(std::span<const std::uint8_t> fresh, bool more_in_socket) {
  unread_ = more_in_socket;
  first_byte_ = first_byte_ || !fresh.empty();
  if (capture_) capture_->recorder->data(capture_->id, true, fresh);
  while (!closed_) {
    const codecs::frame_result r = framer_.next();
    if (r.status.code == codecs::errc::need_more) break;
    if (!r.status.ok()) {
      const auto code = static_cast<std::size_t>(r.status.code);
      if (settings_->alive && code < server_.counters_.framing_errors.size())
        server_.counters_.framing_errors[code].fetch_add(1, std::memory_order_relaxed);
      refuse(metrics::refusal::framing_error,
             std::string("framing error: ") + std::string(codecs::to_string(r.status.code)) +
                 " at stream offset " + std::to_string(r.status.offset));
      return;
    }
    switch (guard_.on_frame(r.value.kind)) {
      case codecs::frame_verdict::keepalive:
        // Counted here: a flood of them would otherwise be a message each.
        if (settings_->alive) server_.counters_.keepalives.fetch_add(1, std::memory_order_relaxed);
        continue;
      case codecs::frame_verdict::before_imei:
        refuse(metrics::refusal::before_imei, std::string(codecs::before_imei_reason));
        return;
      case codecs::frame_verdict::deliver:
        break;
    }
    if (r.value.kind == codecs::frame_kind::imei && !identify()) return;
    listener_->on_frame(r.value);
  }
  // Until the device is identified, the handshake's deadline counts from the start.
  if (guard_.identified()) last_read_ = std::chrono::steady_clock::now();
  if (framer_.buffered() == 0) framer_.shrink();
  // About to wait for the device: OpenSSL's buffers go back while it is quiet.
  if (tls_ && !unread_) tls_->release_buffers();
  wait_readable();
}

// The IMEI frame ends the handshake: its address's handshake quota goes back, and the
// device takes one of the sessions its address may hold.
bool tcp_connection::identify() {
  release_limit();
  const auto& limits = settings_->security.limits;
  if (!limits || limits->settings().sessions == 0 || trusted()) return true;
  holds_session_ = limits->session_begins(address_key());
  if (!holds_session_)
    refuse(metrics::refusal::address_sessions,
           "refused: " + limits->describe(device_) + " holds its limit of sessions (" +
               std::to_string(limits->settings().sessions) + ", --per-address-sessions)");
  return holds_session_;
}

}  // namespace tgw::infra::net
