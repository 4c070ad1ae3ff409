#pragma once

// One device connection of tcp_server (internal to infra/net). Its work is spread over
// files by phase: tcp_connection.cpp (life cycle, deadlines, close),
// tcp_connection_preamble.cpp (PROXY header, per-address limits),
// tcp_connection_tls.cpp (ClientHello, handshake gate, TLS handshake),
// tcp_connection_reads.cpp (reads and framing) and tcp_connection_writes.cpp (writes).
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "actors/ports/device_link.hpp"
#include "codecs/device_conversation.hpp"
#include "infra/metrics/refusals.hpp"
#include "infra/net/connection_executor.hpp"
#include "infra/net/connection_sweep.hpp"
#include "infra/net/ip_endpoint.hpp"
#include "infra/net/tcp_server.hpp"
#include "infra/net/tls_channel.hpp"
#include "infra/net/traffic_recorder.hpp"

namespace tgw::infra::net {

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
class tcp_connection final : public ports::device_link,
                             public std::enable_shared_from_this<tcp_connection> {
 public:
  tcp_connection(tcp_server& server, connection_socket socket, connection_sweep& sweep);

  void start();
  void send(std::vector<std::uint8_t> bytes) override;
  void close(std::string reason) override;
  void frame_done() override;
  void answer_frame(std::vector<std::uint8_t> reply) override;
  bool admit_new_device() override;

  // Made when asked (a session asks once or twice): a string of its own would be 32
  // bytes in every connection. The device's address does not change once a session
  // exists, so any thread may read it.
  [[nodiscard]] std::string peer() const override {
    return device_known_ ? device_.to_string() : "unknown";
  }
  [[nodiscard]] const std::string& via() const override {
    return via_ ? *via_ : ports::device_link::via();
  }

  /// From any thread: close on the connection's thread.
  void abort(const std::string& reason);

 private:
  friend struct connection_sweep;
  enum class phase : std::uint8_t { proxy, hello, tls, framing };

  // --- preamble (tcp_connection_preamble.cpp) -------------------------------------
  bool from_balancer() const;
  bool trusted() const;
  /// The key the device's address is counted under (its /64 for IPv6).
  std::string address_key() const;
  void wait_for_bytes(std::size_t n);
  bool lower_watermark();
  std::size_t peek(std::span<std::uint8_t> into, const char* what);
  bool peer_hung_up();
  void read_proxy_header();
  void after_proxy();
  void begin_framing();
  void release_limit();

  // --- TLS handshake (tcp_connection_tls.cpp) -------------------------------------
  void await_client_hello();
  void enter_handshake_gate();
  void begin_tls();
  void leave_gate();
  void evicted(handshake_gate::eviction why);
  void continue_handshake();

  // --- reads (tcp_connection_reads.cpp) -------------------------------------------
  struct landing_read;
  void finish_frame();
  void wait_readable();
  void receive_into_landing();
  void landed(const boost::system::error_code& ec, std::size_t n);
  void wait_socket(tcp::socket::wait_type direction);
  std::size_t read_some(std::span<std::uint8_t> space, std::string& error, bool& would_block,
                        bool& want_write);
  void read_available();
  void take_received(std::span<const std::uint8_t> fresh, bool more_in_socket);
  bool identify();

  // Under glibc's 1 KiB large-chunk threshold: a larger request makes malloc
  // consolidate its fast bins, once per read. A 10-record packet fits.
  static constexpr std::size_t read_chunk = 1000;
  // A 1-record Codec 8 Extended packet with a few IO elements is 60-120 bytes. Its
  // size is what is left of the connection's size class (the static_assert below).
  static constexpr std::size_t landing_size = 168;

  // --- writes (tcp_connection_writes.cpp) -----------------------------------------
  void queue_write(std::vector<std::uint8_t> b);
  void write_next();
  void write_tls();
  void wrote_front();

  // --- deadlines and close (tcp_connection.cpp) -----------------------------------
  bool close_if_past_deadline(std::chrono::steady_clock::time_point now);
  /// Closes with `reason`. A connection closed before its IMEI is told in the log
  /// (within a budget), unless `told` says its refusal was already.
  void shutdown(const std::string& reason, bool told = false);
  /// Closes a connection that spent a budget: counted under `why`, and told in the log
  /// within the budget of its cause.
  void refuse(metrics::refusal why, const std::string& reason);
  void count(metrics::refusal why) const;

  // The socket's executor, the connection's io thread. Read from any thread: it is
  // set when the socket is made and never changes, and a copy of its own would cost
  // every connection 8 bytes.
  connection_executor executor() { return socket_.get_executor(); }

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
  std::unique_ptr<ports::connection_listener> listener_;
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
  codecs::inbound_guard guard_;     ///< The IMEI first, frames in flight, keepalives.
  std::uint32_t queued_bytes_ = 0;  ///< In writes_.
  std::uint32_t sweep_slot_ = 0;    ///< Its place in sweep_->open.
  phase phase_ = phase::framing;
  bool device_known_ = false;  ///< device_ holds the peer's address (or the PROXY header's).
  bool known_endpoints_ = false;
  bool reading_ = false;
  bool unread_ = false;
  bool writing_ = false;
  bool closed_ = false;
  bool first_byte_ = false;  ///< The device sent a byte (a PROXY header is not the device's).
  bool raised_low_watermark_ = false;  ///< SO_RCVLOWAT is above 1 (wait_for_bytes).
  bool holds_limit_ = false;    ///< This connection holds a handshake in its address's limits.
  bool holds_session_ = false;  ///< It holds a session in its address's limits.
  bool holds_gate_ = false;     ///< Whether a slot of the handshake gate is this connection's.
  /// Its place in the handshake gate (a slot or the line); 0: none.
  std::uint64_t gate_ticket_ = 0;
};

// Every device holds one, idle or not. With make_shared's 16-byte header it fits
// jemalloc's 512-byte size class (docs/PERFORMANCE.md, "Idle memory"); a member that
// pushes it past costs each connection the next class, 128 bytes more. Rare state goes
// behind a pointer.
static_assert(sizeof(tcp_connection) + 16 <= 512, "tcp_connection outgrew its size class");

}  // namespace tgw::infra::net
