#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codecs/tcp_framer.hpp"

namespace tgw::ports {

/// The session layer's handle on one device connection. Every call is safe from any
/// thread: it posts to the connection's io thread, so an actor never touches the socket.
class device_link {
 public:
  virtual ~device_link() = default;
  /// Queues bytes for the device.
  virtual void send(std::vector<std::uint8_t> bytes) = 0;
  /// Closes the connection after the queued bytes are written; `reason` goes to logs
  /// and metrics.
  virtual void close(std::string reason) = 0;
  /// Marks one delivered frame as finished (the IMEI answered, an AVL packet ACKed or
  /// refused, a command reply read), so reading may go on when the per-connection
  /// bound of frames with the session was reached.
  virtual void frame_done() = 0;
  /// Writes the reply to one delivered AVL frame (its ACK) and marks the frame
  /// finished. The same as send() then frame_done(), which is what this default does;
  /// a socket does both in one hop to its io thread, since this runs once per packet.
  virtual void answer_frame(std::vector<std::uint8_t> reply) {
    send(std::move(reply));
    frame_done();
  }
  /// "ip:port" of the device: from the PROXY header when a balancer sent one. A copy,
  /// made when asked: connections keep the address, not its text.
  [[nodiscard]] virtual std::string peer() const = 0;
  /// Spends one of the new-device tokens of the device's source address (a device
  /// whose IMEI the store does not know yet): false when none is left, and the device
  /// is refused. Links that count no addresses admit every device.
  virtual bool admit_new_device() { return true; }
  /// "ip:port" of the balancer the device came through, or empty when it connected
  /// directly.
  [[nodiscard]] virtual const std::string& via() const {
    static const std::string none;
    return none;
  }
};

/// What a connection delivers to the session layer. Implemented on the actors' side;
/// called on the connection's io thread, so implementations only post messages.
class connection_listener {
 public:
  virtual ~connection_listener() = default;
  /// A complete frame; `bytes` is only valid during the call.
  virtual void on_frame(const codecs::frame& f) = 0;
  /// The connection is gone; called exactly once, last.
  virtual void on_closed(const std::string& reason) = 0;
};

}  // namespace tgw::ports
