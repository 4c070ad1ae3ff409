#include "infra/net/tcp_server.hpp"

#include <poll.h>

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "infra/net/tls_channel.hpp"

namespace tgw::infra::net {
namespace {

// A connection's socket and timer run on one io_context of the pool, whose single
// thread serializes them; the concrete executor type spares every operation the
// type-erased executor's dispatch.
using executor_type = asio::io_context::executor_type;
using connection_socket = tcp::socket::rebind_executor<executor_type>::other;
using connection_timer =
    asio::basic_waitable_timer<std::chrono::steady_clock,
                               asio::wait_traits<std::chrono::steady_clock>, executor_type>;

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

// A connection's own loopback peer is exempt from the per-address limits: local
// tools, a simulator or a balancer on the same host without PROXY protocol would
// otherwise be throttled as one client. An address a PROXY header names is never
// exempt: a header may name any address.
bool is_loopback(const ip_endpoint& e) {
  static const std::vector<ip_prefix> loopback = loopback_prefixes();
  return std::ranges::any_of(loopback, [&](const ip_prefix& p) { return p.contains(e); });
}

// TLS records start with a 5-byte header: content type, version, length. The first
// record of a TLS client is a handshake record (type 22) of at most 2^14 bytes.
constexpr std::size_t tls_record_header = 5;
constexpr std::uint8_t tls_handshake_record = 22;
constexpr std::size_t tls_max_plaintext = 16384;

// Whether the peer has shut its side down (or the socket failed): a wait for more
// bytes than it holds would then never end.
bool hung_up(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) != 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// Why a read ended the connection, in the words the session journals.
std::string read_failure(const boost::system::error_code& ec) {
  if (ec == asio::error::eof) return "peer closed";
  if (ec == asio::error::operation_aborted) return "closed";
  return "read failed: " + ec.message();
}

}  // namespace

/// The open connections of one io context and one timer that closes those past their
/// deadline (the handshake's until a device is identified, then the idle timeout), in
/// place of a timer each: a connection's timer and its pending wait were 80 bytes in
/// the connection and an operation of 160 (docs/PERFORMANCE.md, "Idle memory"). Only the
/// context's thread touches it. It holds the connections as the pending waits did:
/// an open connection lives until it is shut down.
struct connection_sweep : std::enable_shared_from_this<connection_sweep> {
  connection_sweep(asio::io_context& io, std::chrono::milliseconds every)
      : timer(io.get_executor()), period(every) {}

  void add(std::shared_ptr<tcp_connection> c);
  /// Takes the connection out; the caller holds it until it is done with it.
  std::shared_ptr<tcp_connection> remove(tcp_connection* c);
  void arm();
  /// Closes every connection past its deadline, then sleeps a period.
  void sweep();

  connection_timer timer;
  std::chrono::milliseconds period;
  std::vector<std::shared_ptr<tcp_connection>> open;
  bool armed = false;
};

/// One device connection. It owns the socket, the framer and the write queue, and
/// lives as long as a read, a write, a timer or the session layer holds it.
///
/// Before its first frame a connection may go through a preamble, each step on its
/// own io thread: the balancer's PROXY header (only from a --proxy-from address; read
/// with MSG_PEEK, then exactly its length, so no device byte is taken early), the
/// per-address limits (with the real address), and the TLS handshake, which takes a
/// slot of the handshake gate only once the device's ClientHello record is whole in
/// the kernel. Only then is the listener (the session actor) made, and the capture
/// opened with the device's address.
class tcp_connection final : public device_link,
                             public std::enable_shared_from_this<tcp_connection> {
 public:
  tcp_connection(tcp_server& server, connection_socket socket, connection_sweep& sweep)
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

  void start() {
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

  void send(std::vector<std::uint8_t> bytes) override {
    asio::post(executor(), [self = shared_from_this(), b = std::move(bytes)]() mutable {
      self->queue_write(std::move(b));
    });
  }

  void close(std::string reason) override {
    asio::post(executor(), [self = shared_from_this(), r = std::move(reason)]() mutable {
      if (self->closed_) return;
      if (self->writing_) {
        self->close_after_writes_ = std::make_unique<std::string>(std::move(r));
      } else {
        self->shutdown(r);
      }
    });
  }

  void frame_done() override {
    asio::post(executor(), [self = shared_from_this()] { self->finish_frame(); });
  }

  void answer_frame(std::vector<std::uint8_t> reply) override {
    asio::post(executor(), [self = shared_from_this(), b = std::move(reply)]() mutable {
      self->queue_write(std::move(b));
      self->finish_frame();
    });
  }

  // Made when asked (a session asks once or twice): a string of its own would be 32
  // bytes in every connection. The device's address does not change once a session
  // exists, so any thread may read it.
  [[nodiscard]] std::string peer() const override {
    return device_known_ ? device_.to_string() : "unknown";
  }
  [[nodiscard]] const std::string& via() const override {
    return via_ ? *via_ : device_link::via();
  }

  /// From any thread: close on the connection's thread.
  void abort(const std::string& reason) {
    asio::post(executor(), [self = shared_from_this(), reason] { self->shutdown(reason); });
  }

 private:
  enum class phase : std::uint8_t { proxy, hello, tls, framing };

  // --- preamble -----------------------------------------------------------------

  bool from_balancer() const {
    return device_known_ &&
           std::ranges::any_of(settings_->security.proxy_from,
                               [&](const ip_prefix& p) { return p.contains(device_); });
  }

  // Waits until the socket holds at least `n` bytes, or the peer hangs up. A wait for
  // readability alone would end at once while bytes peeked before are still there
  // (Asio re-arms the descriptor, and epoll reports unread bytes again), and the
  // connection would spin; with SO_RCVLOWAT the kernel wakes it only when the bytes
  // it needs are in, so a peer dripping them a byte at a time costs no wake-ups.
  void wait_for_bytes(std::size_t n) {
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
  bool lower_watermark() {
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
  std::size_t peek(std::span<std::uint8_t> into, const char* what) {
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

  void read_proxy_header() {
    std::array<std::uint8_t, max_proxy_header> head{};
    const std::size_t n = peek(head, "PROXY header");
    if (n == 0) return;
    const proxy_parse p = parse_proxy_header(std::span(head).first(n), settings_->security.proxy);
    if (p.status == proxy_status::need_more) {
      // Peeked bytes stay in the socket: wait for one more.
      if (hung_up(socket_.native_handle()))
        shutdown("peer closed before its PROXY header was complete");
      else
        wait_for_bytes(n + 1);
      return;
    }
    if (p.status == proxy_status::error) {
      if (settings_->alive) server_.counters_.refused_proxy.fetch_add(1, std::memory_order_relaxed);
      shutdown("PROXY protocol: " + p.error);
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

  void after_proxy() {
    const auto& limits = settings_->security.limits;
    // via_: the address came from a PROXY header, which is counted whatever it says.
    if (limits && limits->enabled() && (via_ || !is_loopback(device_))) {
      const address_verdict v = limits->admit(limits->key_of(device_));
      holds_limit_ = v == address_verdict::admitted;
      if (!holds_limit_) {
        if (settings_->alive)
          server_.counters_.refused_address.fetch_add(1, std::memory_order_relaxed);
        shutdown(v == address_verdict::over_rate
                     ? "refused: too many new connections from " + limits->describe(device_)
                     : "refused: too many handshakes in progress from " +
                           limits->describe(device_));
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

  // TLS: the device's first record, its ClientHello, whole in the socket before an SSL
  // object and a slot of the handshake gate are spent on it. Until then the bytes stay
  // in the kernel, peeked at, so a client that connects and says nothing, or drips its
  // ClientHello a byte at a time, holds no slot that a device ready to talk waits for.
  // Bytes that are no TLS handshake record go to OpenSSL at once, which refuses them
  // with its own reason and alert.
  void await_client_hello() {
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
    if (hung_up(socket_.native_handle()))
      shutdown("peer closed before its TLS ClientHello was complete");
    else
      wait_for_bytes(needed);
  }

  void enter_handshake_gate() {
    phase_ = phase::tls;
    const auto& gate = settings_->security.handshakes;
    const auto start = [weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self) return false;
      asio::post(self->executor(), [self] { self->begin_tls(); });
      return true;
    };
    // Otherwise it waits for a slot; the handshake timeout runs meanwhile.
    if (!gate || gate->enter(start, gate_ticket_)) begin_tls();
  }

  // With a slot of the handshake gate, if there is one.
  void begin_tls() {
    holds_gate_ = settings_->security.handshakes != nullptr;
    gate_ticket_ = 0;
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

  void leave_gate() {
    if (gate_ticket_ != 0) {
      settings_->security.handshakes->withdraw(gate_ticket_);
      gate_ticket_ = 0;
    }
    if (!holds_gate_) return;
    holds_gate_ = false;
    settings_->security.handshakes->leave();
  }

  void continue_handshake() {
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
        wait_socket(tcp::socket::wait_read);
        return;
      case tls_status::want_write:
        wait_socket(tcp::socket::wait_write);
        return;
      case tls_status::closed:
        if (settings_->alive) server_.counters_.tls_failed.fetch_add(1, std::memory_order_relaxed);
        shutdown("peer closed during the TLS handshake");
        return;
      case tls_status::failed:
        if (settings_->alive) server_.counters_.tls_failed.fetch_add(1, std::memory_order_relaxed);
        // Plain device bytes start with 00 0F (the IMEI length), no TLS record.
        shutdown("TLS handshake failed: " + error +
                 (error.find("wrong version") != std::string::npos ||
                          error.find("record") != std::string::npos ||
                          error.find("http") != std::string::npos
                      ? " (plain TCP on the TLS port?)"
                      : ""));
        return;
    }
  }

  void begin_framing() {
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

  void release_limit() {
    if (!holds_limit_) return;
    settings_->security.limits->handshake_over(settings_->security.limits->key_of(device_));
    holds_limit_ = false;
  }

  // --- data path ------------------------------------------------------------------

  // On the connection's thread: bytes for the device, behind what is already queued.
  void queue_write(std::vector<std::uint8_t> b) {
    if (closed_) return;
    if (capture_) capture_->recorder->data(capture_->id, false, b);
    writes_.push_back(std::move(b));
    if (!writing_) write_next();
  }

  void finish_frame() {
    if (in_flight_ > 0) --in_flight_;
    if (!closed_ && !reading_ && phase_ == phase::framing) wait_readable();
  }

  // An idle connection holds no receive buffer: a plain one waits with a read into its
  // small landing area, a TLS one for readability, as OpenSSL reads the socket itself
  // (and gives its buffers back while the device is quiet). Memory is taken only while
  // bytes are in.
  void wait_readable() {
    if (closed_ || reading_ || in_flight_ >= settings_->limits.max_frames_in_flight) return;
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

  // A read, not a readiness wait: Asio's reactor re-arms the descriptor with an
  // epoll_ctl on every async_wait (a syscall per packet), whereas a read that is
  // queued after the socket was found drained waits on the edge-triggered
  // registration it already has. The landing area holds a 1-record packet whole; a
  // larger one is read on from the socket into the framer.
  void receive_into_landing() {
    reading_ = true;
    socket_.async_read_some(asio::buffer(landing_), landing_read{shared_from_this()});
  }

  // The completion of the read above. Its operation waits as long as the device is
  // silent, so an idle connection holds it, and it is allocated at its own size (112
  // bytes): Asio's per-thread recycling would give it the block of a larger operation
  // that just finished, a write's, in the 160- or 224-byte class (docs/PERFORMANCE.md,
  // "Idle memory"). An allocator of its own is what tells Asio not to recycle.
  struct landing_read {
    std::shared_ptr<tcp_connection> self;
    using allocator_type = exact_allocator<void>;
    [[nodiscard]] allocator_type get_allocator() const noexcept { return {}; }
    void operator()(const boost::system::error_code& ec, std::size_t n) const {
      self->landed(ec, n);
    }
  };

  void landed(const boost::system::error_code& ec, std::size_t n) {
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
  void wait_socket(tcp::socket::wait_type direction) {
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
  std::size_t read_some(std::span<std::uint8_t> space, std::string& error, bool& would_block,
                        bool& want_write) {
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

  void read_available() {
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
  void take_received(std::span<const std::uint8_t> fresh, bool more_in_socket) {
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
        shutdown(std::string("framing error: ") + std::string(codecs::to_string(r.status.code)) +
                 " at stream offset " + std::to_string(r.status.offset));
        return;
      }
      if (r.value.kind == codecs::frame_kind::avl) ++in_flight_;
      if (r.value.kind == codecs::frame_kind::imei && !identified_) {
        identified_ = true;
        release_limit();
      }
      listener_->on_frame(r.value);
    }
    // Until the device is identified, the handshake's deadline counts from the start.
    if (identified_) last_read_ = std::chrono::steady_clock::now();
    if (framer_.buffered() == 0) framer_.shrink();
    // About to wait for the device: OpenSSL's buffers go back while it is quiet.
    if (tls_ && !unread_) tls_->release_buffers();
    wait_readable();
  }

  // Under glibc's 1 KiB large-chunk threshold: a larger request makes malloc
  // consolidate its fast bins, once per read. A 10-record packet fits.
  static constexpr std::size_t read_chunk = 1000;
  // A 1-record Codec 8 Extended packet with a few IO elements is 60-120 bytes. Its
  // size is what is left of the connection's size class (the static_assert below).
  static constexpr std::size_t landing_size = 168;

  void write_next() {
    if (tls_) {
      write_tls();
      return;
    }
    writing_ = true;
    asio::async_write(
        socket_, asio::buffer(writes_.front()),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
          self->writing_ = false;
          if (self->closed_) {
            // The connection was shut down while this write was in flight; its buffer
            // had to live until now.
            self->writes_.clear();
            return;
          }
          if (ec) {
            self->shutdown("write failed: " + ec.message());
            return;
          }
          self->wrote_front();
        });
  }

  // OpenSSL copies the bytes into its record when the write succeeds; a write it
  // could not finish is repeated with the same buffer once the socket is writable.
  void write_tls() {
    writing_ = true;
    std::string error;
    const tls_result r = tls_->write(writes_.front(), error);
    if (r.status == tls_status::done) {
      writing_ = false;
      wrote_front();
      return;
    }
    if (r.status == tls_status::want_write || r.status == tls_status::want_read) {
      socket_.async_wait(
          r.status == tls_status::want_write ? tcp::socket::wait_write : tcp::socket::wait_read,
          [self = shared_from_this()](const boost::system::error_code& ec) {
            self->writing_ = false;
            if (self->closed_) {
              self->writes_.clear();
              return;
            }
            if (ec) {
              self->shutdown("write failed: " + ec.message());
              return;
            }
            self->write_tls();
          });
      return;
    }
    writing_ = false;
    shutdown(r.status == tls_status::closed ? "peer closed" : "TLS write failed: " + error);
  }

  void wrote_front() {
    writes_.erase(writes_.begin());
    if (!writes_.empty()) {
      write_next();
    } else if (close_after_writes_) {
      shutdown(*close_after_writes_);
    }
  }

  // For the sweep of its io context: closes the connection if its deadline passed.
  // The first byte's and the handshake's count from the start, the idle timeout from
  // the last read.
  friend struct connection_sweep;
  bool close_if_past_deadline(std::chrono::steady_clock::time_point now) {
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

  void shutdown(const std::string& reason) {
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

  // The socket's executor, the connection's io thread. Read from any thread: it is
  // set when the socket is made and never changes, and a copy of its own would cost
  // every connection 8 bytes.
  executor_type executor() { return socket_.get_executor(); }

  tcp_server& server_;
  std::shared_ptr<const tcp_server::connection_settings> settings_;
  connection_sweep* sweep_;  ///< Of its io context; it outlives the connection's use of it.
  connection_socket socket_;
  codecs::tcp_framer framer_;
  std::unique_ptr<tls_channel> tls_;
  /// The capture of this connection, when the instance records one.
  struct captured {
    std::shared_ptr<traffic_recorder> recorder;
    std::uint64_t id = 0;
  };
  std::unique_ptr<captured> capture_;
  std::unique_ptr<connection_listener> listener_;
  // A vector, not a deque: libstdc++'s deque allocates a 512-byte block and its map
  // when constructed, for every idle connection. The queue is rarely longer than one.
  std::vector<std::vector<std::uint8_t>> writes_;
  std::array<std::uint8_t, landing_size> landing_;
  ip_endpoint device_;
  ip_endpoint gateway_;
  std::unique_ptr<std::string> via_;  ///< Only behind a balancer that sent a PROXY header.
  std::unique_ptr<std::string> close_after_writes_;  ///< Rare: a pointer, not a string.
  /// The start, and from the device's identification on, its last read.
  std::chrono::steady_clock::time_point last_read_ = std::chrono::steady_clock::now();
  std::uint32_t in_flight_ = 0;
  std::uint32_t sweep_slot_ = 0;  ///< Its place in sweep_->open.
  phase phase_ = phase::framing;
  bool device_known_ = false;  ///< device_ holds the peer's address (or the PROXY header's).
  bool known_endpoints_ = false;
  bool reading_ = false;
  bool unread_ = false;
  bool writing_ = false;
  bool identified_ = false;
  bool closed_ = false;
  bool first_byte_ = false;  ///< The device sent a byte (a PROXY header is not the device's).
  bool raised_low_watermark_ = false;  ///< SO_RCVLOWAT is above 1 (wait_for_bytes).
  bool holds_limit_ = false;       ///< This connection holds a handshake in its address's limits.
  bool holds_gate_ = false;        ///< Whether a slot of the handshake gate is this connection's.
  std::uint64_t gate_ticket_ = 0;  ///< Its place in that gate's line while it waits.
};

// Every device holds one, idle or not. With make_shared's 16-byte header it fits
// jemalloc's 512-byte size class (docs/PERFORMANCE.md, "Idle memory"); a member that
// pushes it past costs each connection the next class, 128 bytes more. Rare state goes
// behind a pointer.
static_assert(sizeof(tcp_connection) + 16 <= 512, "tcp_connection outgrew its size class");

void connection_sweep::add(std::shared_ptr<tcp_connection> c) {
  c->sweep_slot_ = static_cast<std::uint32_t>(open.size());
  open.push_back(std::move(c));
  arm();
}

std::shared_ptr<tcp_connection> connection_sweep::remove(tcp_connection* c) {
  const std::size_t slot = c->sweep_slot_;
  if (slot >= open.size() || open[slot].get() != c) return nullptr;  // never added
  auto gone = std::move(open[slot]);
  if (slot + 1 != open.size()) {
    open[slot] = std::move(open.back());
    open[slot]->sweep_slot_ = static_cast<std::uint32_t>(slot);
  }
  open.pop_back();
  return gone;
}

// Ticks only while the context has connections: an idle instance does not wake.
void connection_sweep::arm() {
  if (armed || open.empty()) return;
  armed = true;
  timer.expires_after(period);
  timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();  // The server, and its sweeps, may be gone.
    if (!self) return;
    self->armed = false;
    if (!ec) self->sweep();
  });
}

// Walks every connection of the context, once a period: a load of its deadline each,
// a few milliseconds a second for 100,000 connections, and nothing per packet.
void connection_sweep::sweep() {
  const auto now = std::chrono::steady_clock::now();
  std::size_t i = 0;
  while (i < open.size()) {
    // A connection that closes leaves its slot to the last one: look at it again.
    if (!open[i]->close_if_past_deadline(now)) ++i;
  }
  arm();
}

tcp_server::tcp_server(io_pool& pool, const tcp::endpoint& where, connection_limits limits,
                       listener_factory make_listener, std::shared_ptr<traffic_recorder> capture,
                       listener_security security)
    : pool_(pool),
      acceptor_(asio::make_strand(pool.front())),
      make_listener_(std::move(make_listener)),
      capture_(std::move(capture)),
      settings_(std::make_shared<connection_settings>()) {
  settings_->limits = limits;
  // A deadline is met within an eighth of the shortest timeout, and at most a second late.
  const auto period = std::clamp(
      std::min({limits.first_byte_timeout, limits.handshake_timeout, limits.idle_timeout}) / 8,
      std::chrono::milliseconds{10}, std::chrono::milliseconds{1000});
  for (std::size_t i = 0; i < pool.size(); ++i)
    sweeps_.push_back(std::make_shared<connection_sweep>(pool.at(i), period));
  settings_->security = std::move(security);
  acceptor_.open(where.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(where);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
}

tcp_server::~tcp_server() {
  settings_->alive = false;
  std::lock_guard lock(mutex_);
  live_.clear();
}

void tcp_server::start() {
  accept_next();
}

void tcp_server::stop_accepting() {
  asio::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
}

void tcp_server::close_all(const std::string& reason) {
  std::lock_guard lock(mutex_);
  for (tcp_connection* c : live_) c->abort(reason);
}

void tcp_server::forget(tcp_connection* c) {
  std::lock_guard lock(mutex_);
  if (live_.erase(c) > 0) counters_.open.fetch_sub(1);
}

void tcp_server::accept_next() {
  const std::size_t io = pool_.next_index();
  acceptor_.async_accept(pool_.at(io).get_executor(), [this, io](
                                                          const boost::system::error_code& ec,
                                                          connection_socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      if (static_cast<std::size_t>(counters_.open.load()) >= settings_->limits.max_connections) {
        counters_.refused_over_limit.fetch_add(1);
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        counters_.accepted.fetch_add(1);
        auto c = std::make_shared<tcp_connection>(*this, std::move(socket), *sweeps_[io]);
        {
          std::lock_guard lock(mutex_);
          live_.insert(c.get());
          counters_.open.fetch_add(1);
        }
        c->start();
      }
    }
    accept_next();
  });
}

}  // namespace tgw::infra::net
