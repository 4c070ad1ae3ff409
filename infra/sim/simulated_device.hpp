#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "codecs/imei.hpp"
#include "infra/net/asio.hpp"
#include "infra/net/asio_ssl.hpp"
#include "infra/net/tls_channel.hpp"
#include "infra/sim/acked_log.hpp"
#include "infra/sim/fleet_options.hpp"
#include "infra/sim/fleet_stats.hpp"
#include "infra/sim/record_generator.hpp"

namespace tgw::infra::sim {

/// What every device of a fleet shares: settings, the record generator, the counters
/// and the resolved target. The fleet owns it and outlives its devices.
struct device_environment {
  const fleet_options& options;
  const record_generator& generator;
  fleet_counters& counters;
  net::tcp::endpoint tcp_target;
  net::udp::endpoint udp_target;
  /// Called once per device when it is done, on that device's io thread.
  std::function<void()> on_finished;
  /// Where ACKed packets are logged; null when no one asked.
  acked_log* acked = nullptr;
  /// Client TLS settings with --tls; null for plain TCP.
  net::asio::ssl::context* tls = nullptr;
};

/// One simulated tracker: a state machine that runs on one io thread (its io_context
/// is run by that thread alone, so no strand is needed) and behaves as a Teltonika
/// device does. Over TCP it connects, sends its IMEI, waits for the verdict
/// (00: counted, the device stops), then sends one AVL packet at a time and waits for
/// the 4-byte ACK; a timeout or a wrong count makes it send the same bytes again, and a
/// lost connection makes it reconnect after a backoff and resend the unACKed packet.
/// It answers Codec 12 and Codec 14 commands whenever they arrive. Over UDP it sends
/// datagrams and waits for the 7-byte response with the same ids.
///
/// The packet is encoded once into a buffer that is reused for every packet and every
/// resend; the state, two timers and a few reused buffers are all a device holds.
/// The fleet owns its devices and joins the io threads before destroying them, which
/// is why handlers may hold `this`; every handler runs on the device's io thread and
/// checks a sequence number, so one from an old connection or timer does nothing.
class simulated_device {
 public:
  /// `io` must be run by one thread only: the device's handlers rely on it.
  simulated_device(net::asio::io_context& io, const device_environment& env, std::size_t index,
                   const codecs::imei& id);
  simulated_device(const simulated_device&) = delete;
  simulated_device& operator=(const simulated_device&) = delete;

  /// Connects after `delay`. Thread-safe.
  void start(std::chrono::milliseconds delay);
  /// Closes the connection and finishes the device. Thread-safe; idempotent.
  void stop();

  [[nodiscard]] const codecs::imei& id() const noexcept { return imei_; }

 private:
  enum class phase : std::uint8_t { idle, connecting, handshaking, ready, done };
  enum class timer_purpose : std::uint8_t { connect, connect_timeout, ack, next_packet };

  // Concrete executor types: a type-erased executor costs a virtual dispatch and a
  // `prefer` per operation, which showed up in the simulator's profile.
  using executor_type = net::asio::io_context::executor_type;
  using tcp_socket = net::asio::basic_stream_socket<net::tcp, executor_type>;
  using udp_socket = net::asio::basic_datagram_socket<net::udp, executor_type>;
  using timer_type = net::asio::basic_waitable_timer<
      std::chrono::steady_clock, net::asio::wait_traits<std::chrono::steady_clock>, executor_type>;
  // TLS over the device's socket, driven like the gateway's (infra/net/tls_channel):
  // each call tries OpenSSL first and waits for the socket only when it asks to.
  void continue_tls_handshake(std::uint32_t seq);
  void tls_read(std::uint32_t seq);
  void tls_write(std::uint32_t seq, std::span<const std::uint8_t> bytes);
  void write_bytes(std::uint32_t seq, std::span<const std::uint8_t> bytes);

  void arm_timer(timer_purpose purpose, std::chrono::milliseconds delay);
  void cancel_timer();
  void on_timer();

  void open_connection();
  void open_udp();
  void on_connect(std::uint32_t seq, const boost::system::error_code& ec);
  void tls_failed(const std::string& why);
  void begin_session();
  void connect_failed(const boost::system::error_code& ec);
  void close_socket();
  void drop_connection(bool count_disconnect);
  void schedule_reconnect();
  void finish();

  void start_read();
  void on_read(std::uint32_t seq, const boost::system::error_code& ec, std::size_t n);
  void start_receive();
  void on_receive(std::uint32_t seq, const boost::system::error_code& ec, std::size_t n);
  void process_input();

  void on_verdict(std::uint8_t verdict);
  void on_ack(std::uint32_t count);
  void on_ack_timeout();
  void on_command(std::span<const std::uint8_t> frame);
  void release_delayed_replies();

  void send_new_packet();
  void queue_frame();
  void build_packet();
  void flush();
  void on_written(std::uint32_t seq, const boost::system::error_code& ec);

  [[nodiscard]] bool tcp() const noexcept { return env_.options.transport == transport_kind::tcp; }
  [[nodiscard]] std::chrono::milliseconds backoff() noexcept;

  const device_environment& env_;
  executor_type executor_;
  tcp_socket tcp_;
  udp_socket udp_;
  /// The TLS session of the current connection (--tls); null for plain TCP. Handlers
  /// of an old connection check conn_seq_ before they touch it.
  std::unique_ptr<net::tls_channel> tls_;
  timer_type timer_;
  timer_type reply_timer_;

  std::vector<std::uint8_t> frame_;    ///< The current AVL packet, resent as is.
  std::vector<std::uint8_t> control_;  ///< Handshake and command replies waiting to go.
  std::vector<std::uint8_t> writing_;  ///< Control bytes being written.
  std::vector<std::uint8_t> delayed_;  ///< Replies held back by --reply-delay-ms.
  std::vector<std::uint8_t> rx_;       ///< Bytes from the server; [rx_begin_, rx_end_) unread.
  std::size_t rx_begin_ = 0;
  std::size_t rx_end_ = 0;

  motion_state motion_;
  std::chrono::steady_clock::time_point sent_at_{};
  /// When the current packet first went out: --send-period counts from here.
  std::chrono::steady_clock::time_point period_start_{};
  std::uint64_t first_ts_ = 0;  ///< Timestamps of the first and last record in frame_.
  std::uint64_t last_ts_ = 0;
  std::uint64_t acked_packets_ = 0;
  std::uint32_t conn_seq_ = 0;   ///< Bumped whenever the socket closes.
  std::uint32_t timer_seq_ = 0;  ///< Bumped whenever timer_ is re-armed or cancelled.
  std::uint32_t index_;
  std::uint16_t records_in_frame_ = 0;
  std::uint16_t outstanding_acks_ = 0;  ///< Intact copies sent on this connection, unanswered.
  std::uint16_t udp_packet_id_ = 0;
  std::uint8_t avl_packet_id_ = 0;
  std::uint8_t backoff_attempts_ = 0;
  phase phase_ = phase::idle;
  timer_purpose purpose_ = timer_purpose::connect;
  codecs::imei imei_;

  bool has_packet_ = false;     ///< frame_ holds a packet not ACKed yet.
  bool build_pending_ = false;  ///< The next write must build a new packet first.
  bool frame_queued_ = false;   ///< frame_ is to be (re)sent when the socket is free.
  bool awaiting_ack_ = false;   ///< A packet went out (or is queued) and awaits its ACK.
  bool write_in_progress_ = false;
  bool frame_in_write_ = false;
  bool bad_crc_ = false;          ///< frame_ carries a deliberately corrupted CRC.
  bool fix_crc_pending_ = false;  ///< Restore the CRC before the next write of frame_.
  bool connected_ = false;        ///< Counted in fleet_counters::connected.
  bool reply_timer_armed_ = false;
};

}  // namespace tgw::infra::sim
