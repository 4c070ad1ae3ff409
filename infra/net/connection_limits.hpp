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
  /// AVL frames delivered but not yet ACKed or refused; reading stops at the bound.
  std::size_t max_frames_in_flight = 4;
};

}  // namespace tgw::infra::net
