#pragma once

// A gateway small enough to trust, for testing the simulator: it answers the IMEI
// handshake, splits the stream with codecs::tcp_framer, decodes AVL frames with
// decode_avl_frame and ACKs their record count, and can misbehave on purpose (never
// ACK, ACK only a later copy, reject, close mid-stream, send commands). It runs on its
// own io thread and records what it saw for the test to check.

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "codecs/avl.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/command.hpp"
#include "codecs/imei.hpp"
#include "codecs/tcp_framer.hpp"
#include "codecs/udp.hpp"
#include "infra/net/asio.hpp"

namespace tgw::infra::sim::testing {

namespace net = tgw::infra::net;

/// How the fake gateway behaves.
struct gateway_behaviour {
  std::uint8_t verdict = codecs::imei_accepted;
  bool ack = true;
  /// ACK a packet only when this copy of its bytes arrives (2: the first is ignored).
  std::size_t ack_from_copy = 1;
  /// Answer the first copy of a packet only when its second copy arrives, with two
  /// ACKs: the device has moved on when the second one comes.
  bool ack_first_copy_late = false;
  /// Close the connection, without an ACK, on a device's very first AVL frame.
  bool close_on_first_frame = false;
  /// After the first ACK on a connection: send a Codec 12 command, then a Codec 14
  /// command for the device's IMEI, then one for another IMEI, each once the previous
  /// reply came back. AVL frames that arrive meanwhile are ACKed after the last reply.
  bool command_script = false;
  /// Send one Codec 12 command right after the first ACK on a connection, and carry on
  /// without waiting for a reply.
  bool command_after_first_ack = false;
};

/// One AVL frame or datagram the gateway received.
struct seen_frame {
  std::string imei;
  std::vector<std::uint8_t> bytes;
  bool crc_ok = false;
  std::uint8_t codec = 0;
  std::vector<std::uint64_t> timestamps;
  std::size_t io_per_record = 0;
  std::uint16_t udp_packet_id = 0;
};

/// One Codec 12/14 message a device sent back.
struct seen_reply {
  std::string imei;  ///< The connection's IMEI.
  std::uint8_t codec = 0;
  std::uint8_t type = 0;
  std::string reply_imei;  ///< The Codec 14 IMEI field.
  std::string text;
};

inline constexpr const char* other_imei = "352093081452251";

class fake_gateway {
 public:
  explicit fake_gateway(gateway_behaviour behaviour, bool udp = false)
      : behaviour_(behaviour), acceptor_(io_), udp_socket_(io_) {
    if (udp) {
      udp_socket_.open(net::udp::v4());
      udp_socket_.bind({net::asio::ip::make_address("127.0.0.1"), 0});
      port_ = udp_socket_.local_endpoint().port();
      receive_datagram();
    } else {
      const net::tcp::endpoint where(net::asio::ip::make_address("127.0.0.1"), 0);
      acceptor_.open(where.protocol());
      acceptor_.set_option(net::tcp::acceptor::reuse_address(true));
      acceptor_.bind(where);
      acceptor_.listen();
      port_ = acceptor_.local_endpoint().port();
      accept();
    }
    thread_ = std::thread([this] { io_.run(); });
  }

  fake_gateway(const fake_gateway&) = delete;
  fake_gateway& operator=(const fake_gateway&) = delete;

  ~fake_gateway() {
    io_.stop();
    thread_.join();
  }

  [[nodiscard]] std::uint16_t port() const { return port_; }

  [[nodiscard]] std::vector<seen_frame> frames() const {
    const std::lock_guard lock(mutex_);
    return frames_;
  }
  [[nodiscard]] std::vector<seen_frame> frames_of(const std::string& imei) const {
    std::vector<seen_frame> out;
    for (seen_frame& f : frames())
      if (f.imei == imei) out.push_back(std::move(f));
    return out;
  }
  [[nodiscard]] std::vector<seen_reply> replies() const {
    const std::lock_guard lock(mutex_);
    return replies_;
  }
  [[nodiscard]] std::size_t connections() const {
    const std::lock_guard lock(mutex_);
    return connections_;
  }
  [[nodiscard]] std::set<std::string> peer_addresses() const {
    const std::lock_guard lock(mutex_);
    return peers_;
  }

  /// Waits until `n` replies arrived, up to a generous bound; true if they did. A
  /// device may close right after writing a reply, before this thread has read it.
  bool wait_for_replies(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds{30}, [&] { return replies_.size() >= n; });
  }

  /// Waits until `done(frames)` holds, up to a generous bound; true if it did.
  bool wait_until(const std::function<bool(const std::vector<seen_frame>&)>& done) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds{30}, [&] { return done(frames_); });
  }

 private:
  class session : public std::enable_shared_from_this<session> {
   public:
    session(fake_gateway& gateway, net::tcp::socket socket)
        : gateway_(gateway), socket_(std::move(socket)) {}

    void start() { read(); }

   private:
    void read() {
      const auto space = framer_.prepare(4096);
      socket_.async_read_some(net::asio::buffer(space.data(), space.size()),
                              [self = shared_from_this()](auto ec, std::size_t n) {
                                if (ec || self->closed_) return;
                                self->framer_.commit(n);
                                self->drain();
                                if (!self->closed_) self->read();
                              });
    }

    void drain() {
      for (;;) {
        const codecs::frame_result r = framer_.next();
        if (r.status.code == codecs::errc::need_more) return;
        if (!r.status.ok()) {
          close();
          return;
        }
        switch (r.value.kind) {
          case codecs::frame_kind::imei:
            on_imei(r.value.bytes);
            break;
          case codecs::frame_kind::avl:
            on_avl(r.value.bytes);
            break;
          case codecs::frame_kind::command:
            on_reply(r.value.bytes);
            break;
          case codecs::frame_kind::keepalive:
            break;
        }
        if (closed_) return;
      }
    }

    void on_imei(std::span<const std::uint8_t> bytes) {
      codecs::imei id;
      if (!codecs::parse_imei_packet(bytes, id).ok()) {
        close();
        return;
      }
      imei_ = std::string(id.str());
      write({gateway_.behaviour_.verdict});
    }

    void on_avl(std::span<const std::uint8_t> bytes) {
      codecs::avl_packet packet;
      const codecs::decode_status status = codecs::decode_avl_frame(bytes, packet);
      seen_frame f;
      f.imei = imei_;
      f.bytes.assign(bytes.begin(), bytes.end());
      f.crc_ok = status.ok();
      f.codec = packet.codec;
      if (status.ok()) {
        for (const codecs::avl_record& rec : packet.records)
          f.timestamps.push_back(rec.timestamp_ms);
        if (!packet.records.empty()) f.io_per_record = packet.records.front().io_count;
      }
      std::size_t copies = 0;
      bool first_of_device = false;
      {
        const std::lock_guard lock(gateway_.mutex_);
        gateway_.frames_.push_back(f);
        copies = ++gateway_.copies_[f.bytes];
        first_of_device = gateway_.devices_seen_.insert(imei_).second;
      }
      gateway_.changed_.notify_all();
      // A correct gateway never ACKs a frame that does not decode.
      if (!status.ok()) return;
      const gateway_behaviour& b = gateway_.behaviour_;
      if (b.close_on_first_frame && first_of_device) {
        close();
        return;
      }
      if (!b.ack || copies < b.ack_from_copy) return;
      const auto records = static_cast<std::uint32_t>(packet.records.size());
      if (script_step_ > 0) {
        held_acks_.push_back(records);  // A command is in flight.
        return;
      }
      const auto ack = codecs::avl_ack(records);
      if (b.ack_first_copy_late) {
        if (copies == 1) return;
        if (copies == 2) write({ack.begin(), ack.end()});
      }
      write({ack.begin(), ack.end()});
      if (!acked_once_) {
        acked_once_ = true;
        if (b.command_script) {
          script_step_ = 1;
          send_command(codecs::codec_id::codec12, "getinfo", imei_);
        } else if (b.command_after_first_ack) {
          send_command(codecs::codec_id::codec12, "getinfo", imei_);
        }
      }
    }

    void on_reply(std::span<const std::uint8_t> bytes) {
      codecs::command_message m;
      if (!codecs::decode_command_frame(bytes, m).ok()) {
        close();
        return;
      }
      seen_reply r;
      r.imei = imei_;
      r.codec = m.codec;
      r.type = m.type;
      if (m.has_imei) r.reply_imei = std::string(m.device.str());
      r.text = std::string(m.payload_text());
      {
        const std::lock_guard lock(gateway_.mutex_);
        gateway_.replies_.push_back(r);
      }
      gateway_.changed_.notify_all();
      if (script_step_ == 1) {
        script_step_ = 2;
        send_command(codecs::codec_id::codec14, "getver", imei_);
      } else if (script_step_ == 2) {
        script_step_ = 3;
        send_command(codecs::codec_id::codec14, "getver", other_imei);
      } else if (script_step_ == 3) {
        script_step_ = 0;
        for (const std::uint32_t records : held_acks_) {
          const auto ack = codecs::avl_ack(records);
          write({ack.begin(), ack.end()});
        }
        held_acks_.clear();
      }
    }

    void send_command(codecs::codec_id codec, std::string_view text, const std::string& imei) {
      codecs::command_fields fields;
      fields.codec = codec;
      fields.type = codecs::message_type::command;
      fields.payload = codecs::as_bytes(text);
      if (codec == codecs::codec_id::codec14) (void)codecs::imei::parse(imei, fields.device);
      std::vector<std::uint8_t> frame;
      (void)codecs::encode_command_frame(fields, frame);
      write(std::move(frame));
    }

    void write(std::vector<std::uint8_t> bytes) {
      queue_.push_back(std::move(bytes));
      if (queue_.size() == 1) write_front();
    }

    void write_front() {
      net::asio::async_write(socket_, net::asio::buffer(queue_.front()),
                             [self = shared_from_this()](auto ec, std::size_t) {
                               if (ec) return;
                               self->queue_.pop_front();
                               if (!self->queue_.empty()) self->write_front();
                             });
    }

    void close() {
      closed_ = true;
      boost::system::error_code ignored;
      socket_.close(ignored);
    }

    fake_gateway& gateway_;
    net::tcp::socket socket_;
    codecs::tcp_framer framer_;
    std::string imei_;
    std::deque<std::vector<std::uint8_t>> queue_;
    std::vector<std::uint32_t> held_acks_;
    int script_step_ = 0;
    bool acked_once_ = false;
    bool closed_ = false;
  };

  void accept() {
    acceptor_.async_accept([this](auto ec, net::tcp::socket socket) {
      if (ec) return;
      {
        const std::lock_guard lock(mutex_);
        ++connections_;
        boost::system::error_code e;
        const auto peer = socket.remote_endpoint(e);
        if (!e) peers_.insert(peer.address().to_string());
      }
      std::make_shared<session>(*this, std::move(socket))->start();
      accept();
    });
  }

  void receive_datagram() {
    udp_socket_.async_receive_from(net::asio::buffer(datagram_), sender_,
                                   [this](auto ec, std::size_t n) {
                                     if (ec) return;
                                     on_datagram({datagram_.data(), n});
                                     receive_datagram();
                                   });
  }

  void on_datagram(std::span<const std::uint8_t> bytes) {
    codecs::udp_header header;
    codecs::avl_packet packet;
    const bool ok = codecs::decode_udp_datagram(bytes, header, packet).ok();
    seen_frame f;
    f.imei = std::string(header.device.str());
    f.bytes.assign(bytes.begin(), bytes.end());
    f.crc_ok = ok;
    f.codec = packet.codec;
    f.udp_packet_id = header.packet_id;
    if (ok)
      for (const codecs::avl_record& rec : packet.records) f.timestamps.push_back(rec.timestamp_ms);
    std::size_t copies = 0;
    {
      const std::lock_guard lock(mutex_);
      frames_.push_back(f);
      copies = ++copies_[f.bytes];
      peers_.insert(sender_.address().to_string());
    }
    changed_.notify_all();
    if (!ok || !behaviour_.ack || copies < behaviour_.ack_from_copy) return;
    response_ = codecs::udp_response(header.packet_id, header.avl_packet_id,
                                     static_cast<std::uint8_t>(packet.records.size()));
    boost::system::error_code ignored;
    udp_socket_.send_to(net::asio::buffer(response_), sender_, 0, ignored);
  }

  gateway_behaviour behaviour_;
  net::asio::io_context io_;
  net::tcp::acceptor acceptor_;
  net::udp::socket udp_socket_;
  net::udp::endpoint sender_;
  std::array<std::uint8_t, 2048> datagram_{};
  std::array<std::uint8_t, 7> response_{};
  std::uint16_t port_ = 0;
  std::thread thread_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<seen_frame> frames_;
  std::vector<seen_reply> replies_;
  std::map<std::vector<std::uint8_t>, std::size_t> copies_;
  std::set<std::string> devices_seen_;
  std::set<std::string> peers_;
  std::size_t connections_ = 0;
};

}  // namespace tgw::infra::sim::testing
