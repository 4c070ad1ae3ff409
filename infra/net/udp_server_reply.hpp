#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace tgw::infra::net {

/// Sends a reply to the peer a datagram came from; safe from any thread. Declared
/// apart from udp_server so actors can name it without including Asio.
using udp_reply = std::function<void(std::vector<std::uint8_t>)>;

}  // namespace tgw::infra::net
