#pragma once

#include <chrono>
#include <cstddef>

#include "codecs/tcp_framer.hpp"

namespace tgw::infra::net {

/// Limits on device connections; every one has a flag in `tgw serve`.
struct connection_limits {
  std::size_t max_frame_size = codecs::default_max_frame_size;
  /// A connection whose device has sent no byte by then is closed. A PROXY header is
  /// the balancer's and does not count. Shorter than the handshake timeout: a silent
  /// connection holds an address's handshake quota and a descriptor, and a device
  /// that means to speak does so at once.
  std::chrono::milliseconds first_byte_timeout{3'000};
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds idle_timeout{30 * 60 * 1000};
  std::size_t max_connections = 100'000;
  /// Frames (the IMEI, AVL packets, command replies) delivered to the session and not
  /// yet finished; reading stops at the bound, so a device that sends faster than the
  /// instance persists waits in its own socket buffer.
  std::size_t max_frames_in_flight = 4;
  /// Bytes and writes queued for a device that does not read them (ACKs, command
  /// frames); past either bound the connection is closed. A device that reads has at
  /// most a few ACKs and a command queued.
  std::size_t max_write_queue_bytes = std::size_t{64} * 1024;
  std::size_t max_write_queue_writes = 64;
  /// TCP keepalive on device sockets: the first probe after this much silence, then
  /// every tenth of it, 5 unanswered probes closing the socket. 0: off.
  std::chrono::seconds tcp_keepalive{60};
};

}  // namespace tgw::infra::net
