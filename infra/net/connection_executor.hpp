#pragma once

// The socket and timer types of tcp_server's connections (internal to infra/net).
#include <chrono>

#include "infra/net/asio.hpp"

namespace tgw::infra::net {

// A connection's socket and timer run on one io_context of the pool, whose single
// thread serializes them; the concrete executor type spares every operation the
// type-erased executor's dispatch.
using connection_executor = asio::io_context::executor_type;
using connection_socket = tcp::socket::rebind_executor<connection_executor>::other;
using connection_timer =
    asio::basic_waitable_timer<std::chrono::steady_clock,
                               asio::wait_traits<std::chrono::steady_clock>, connection_executor>;

}  // namespace tgw::infra::net
