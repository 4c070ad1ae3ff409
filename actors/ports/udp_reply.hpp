#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace tgw::ports {

/// Sends a reply to the peer a datagram came from; safe from any thread. Declared
/// apart from the UDP server (infra/net) so actors can name it without including Asio.
using udp_reply = std::function<void(std::vector<std::uint8_t>)>;

}  // namespace tgw::ports
