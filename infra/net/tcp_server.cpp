#include "infra/net/tcp_server.hpp"

#include <deque>

#include "infra/capture/capture_recorder.hpp"

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

capture::ip_endpoint to_capture(const tcp::endpoint& e) {
  capture::ip_endpoint out;
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

/// One device connection. It owns the socket, the framer and the write queue, and
/// lives as long as a read, a write, a timer or the session layer holds it.
class tcp_connection final : public device_link,
                             public std::enable_shared_from_this<tcp_connection> {
 public:
  tcp_connection(tcp_server& server, connection_socket socket, const connection_limits& limits)
      : server_(server),
        alive_(server.alive_),
        socket_(std::move(socket)),
        executor_(socket_.get_executor()),
        timer_(executor_),
        framer_(limits.max_frame_size, true),
        limits_(limits),
        capture_(server.capture_) {
    boost::system::error_code ec;
    const auto remote = socket_.remote_endpoint(ec);
    peer_ = ec ? std::string("unknown")
               : remote.address().to_string() + ":" + std::to_string(remote.port());
    if (capture_) {
      boost::system::error_code local_ec;
      const auto local = socket_.local_endpoint(local_ec);
      if (!ec && !local_ec)
        capture_id_ = capture_->open(to_capture(remote), to_capture(local));
      else
        capture_.reset();
    }
    socket_.set_option(tcp::no_delay(true), ec);
    socket_.non_blocking(true, ec);
  }

  void start(std::unique_ptr<connection_listener> listener) {
    asio::post(executor_, [self = shared_from_this(), l = std::move(listener)]() mutable {
      if (self->closed_) {
        // close_all() reached the connection between its accept and this handler: the
        // listener still hears of the close, or its session would wait for it forever.
        l->on_closed(self->close_reason_);
        return;
      }
      self->listener_ = std::move(l);
      self->deadline_ = std::chrono::steady_clock::now() + self->limits_.handshake_timeout;
      self->arm_timer();
      self->wait_readable();
    });
  }

  void send(std::vector<std::uint8_t> bytes) override {
    asio::post(executor_, [self = shared_from_this(), b = std::move(bytes)]() mutable {
      self->queue_write(std::move(b));
    });
  }

  void close(std::string reason) override {
    asio::post(executor_, [self = shared_from_this(), r = std::move(reason)]() mutable {
      if (self->closed_) return;
      if (self->writing_) {
        self->close_after_writes_ = std::move(r);
      } else {
        self->shutdown(r);
      }
    });
  }

  void frame_done() override {
    asio::post(executor_, [self = shared_from_this()] { self->finish_frame(); });
  }

  void answer_frame(std::vector<std::uint8_t> reply) override {
    asio::post(executor_, [self = shared_from_this(), b = std::move(reply)]() mutable {
      self->queue_write(std::move(b));
      self->finish_frame();
    });
  }

  [[nodiscard]] const std::string& peer() const override { return peer_; }

  /// From any thread: close on the connection's thread.
  void abort(const std::string& reason) {
    asio::post(executor_, [self = shared_from_this(), reason] { self->shutdown(reason); });
  }

 private:
  // On the connection's thread: bytes for the device, behind what is already queued.
  void queue_write(std::vector<std::uint8_t> b) {
    if (closed_) return;
    if (capture_) capture_->data(capture_id_, false, b);
    writes_.push_back(std::move(b));
    if (!writing_) write_next();
  }

  void finish_frame() {
    if (in_flight_ > 0) --in_flight_;
    if (!closed_ && !reading_) wait_readable();
  }

  // Waiting for readability instead of reading into a buffer keeps an idle
  // connection without any receive buffer: memory is taken only while bytes are in.
  void wait_readable() {
    if (closed_ || reading_ || in_flight_ >= limits_.max_frames_in_flight) return;
    reading_ = true;
    if (unread_) {
      // The socket is edge-triggered: bytes already there announce themselves no
      // more, so read them rather than wait. Posted, so other connections get a turn.
      asio::post(executor_, [self = shared_from_this()] {
        self->reading_ = false;
        if (!self->closed_) self->read_available();
      });
      return;
    }
    socket_.async_wait(
        tcp::socket::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
          self->reading_ = false;
          if (ec) {
            self->shutdown(ec == asio::error::operation_aborted ? "closed"
                                                                : "read failed: " + ec.message());
            return;
          }
          self->read_available();
        });
  }

  void read_available() {
    boost::system::error_code ec;
    // No FIONREAD to size the read: a syscall per packet for a figure the read itself
    // gives. Most packets fit this space; a larger frame takes a few reads.
    auto space = framer_.prepare(read_chunk);
    const std::size_t n = socket_.read_some(asio::buffer(space.data(), space.size()), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      unread_ = false;
      wait_readable();
      return;
    }
    if (ec) {
      shutdown(ec == asio::error::eof ? "peer closed" : "read failed: " + ec.message());
      return;
    }
    // A read that filled its space may have left bytes in the socket.
    unread_ = n == space.size();
    if (capture_) capture_->data(capture_id_, true, space.first(n));
    framer_.commit(n);
    last_read_ = std::chrono::steady_clock::now();
    while (!closed_) {
      const codecs::frame_result r = framer_.next();
      if (r.status.code == codecs::errc::need_more) break;
      if (!r.status.ok()) {
        const auto code = static_cast<std::size_t>(r.status.code);
        if (*alive_ && code < server_.counters_.framing_errors.size())
          server_.counters_.framing_errors[code].fetch_add(1, std::memory_order_relaxed);
        shutdown(std::string("framing error: ") + std::string(codecs::to_string(r.status.code)) +
                 " at stream offset " + std::to_string(r.status.offset));
        return;
      }
      if (r.value.kind == codecs::frame_kind::avl) ++in_flight_;
      if (r.value.kind == codecs::frame_kind::imei && !identified_) {
        identified_ = true;
        deadline_ = last_read_ + limits_.idle_timeout;
      }
      listener_->on_frame(r.value);
    }
    if (framer_.buffered() == 0) framer_.shrink();
    wait_readable();
  }

  // Under glibc's 1 KiB large-chunk threshold: a larger request makes malloc
  // consolidate its fast bins, once per read. A 10-record packet fits.
  static constexpr std::size_t read_chunk = 1000;

  void write_next() {
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
          self->writes_.pop_front();
          if (!self->writes_.empty()) {
            self->write_next();
          } else if (!self->close_after_writes_.empty()) {
            self->shutdown(self->close_after_writes_);
          }
        });
  }

  // One timer serves both deadlines. It is not re-armed on every read: when it fires
  // it checks the time of the last read and sleeps again for the remainder.
  void arm_timer() {
    timer_.expires_at(deadline_);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->closed_) return;
      if (!self->identified_) {
        self->shutdown("handshake timeout");
        return;
      }
      const auto idle_until = self->last_read_ + self->limits_.idle_timeout;
      if (std::chrono::steady_clock::now() >= idle_until) {
        self->shutdown("idle timeout");
        return;
      }
      self->deadline_ = idle_until;
      self->arm_timer();
    });
  }

  void shutdown(const std::string& reason) {
    if (closed_) return;
    closed_ = true;
    close_reason_ = reason;
    boost::system::error_code ec;
    timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    // A write in flight still reads its buffer; the write handler frees it.
    if (!writing_) writes_.clear();
    if (capture_) capture_->close(capture_id_, reason == "peer closed");
    if (listener_) {
      listener_->on_closed(reason);
      listener_.reset();  // breaks the cycle session -> link -> listener -> session
    }
    if (*alive_) server_.forget(this);
  }

  tcp_server& server_;
  std::shared_ptr<bool> alive_;
  connection_socket socket_;
  executor_type executor_;
  connection_timer timer_;
  codecs::tcp_framer framer_;
  const connection_limits limits_;
  std::shared_ptr<capture::capture_recorder> capture_;
  std::uint64_t capture_id_ = 0;
  std::unique_ptr<connection_listener> listener_;
  std::deque<std::vector<std::uint8_t>> writes_;
  std::string peer_;
  std::string close_after_writes_;
  std::string close_reason_;  ///< Why shutdown() closed the connection.
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::steady_clock::time_point last_read_ = std::chrono::steady_clock::now();
  std::size_t in_flight_ = 0;
  bool reading_ = false;
  bool unread_ = false;
  bool writing_ = false;
  bool identified_ = false;
  bool closed_ = false;
};

tcp_server::tcp_server(io_pool& pool, const tcp::endpoint& where, connection_limits limits,
                       listener_factory make_listener,
                       std::shared_ptr<capture::capture_recorder> capture)
    : pool_(pool),
      acceptor_(asio::make_strand(pool.front())),
      limits_(limits),
      make_listener_(std::move(make_listener)),
      capture_(std::move(capture)) {
  acceptor_.open(where.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(where);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
}

tcp_server::~tcp_server() {
  *alive_ = false;
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
  acceptor_.async_accept(pool_.next().get_executor(), [this](const boost::system::error_code& ec,
                                                             connection_socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      if (static_cast<std::size_t>(counters_.open.load()) >= limits_.max_connections) {
        counters_.refused_over_limit.fetch_add(1);
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        counters_.accepted.fetch_add(1);
        auto c = std::make_shared<tcp_connection>(*this, std::move(socket), limits_);
        {
          std::lock_guard lock(mutex_);
          live_.insert(c.get());
          counters_.open.fetch_add(1);
        }
        c->start(make_listener_(c));
      }
    }
    accept_next();
  });
}

}  // namespace tgw::infra::net
