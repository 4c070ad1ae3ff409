#pragma once

// The one way into Boost.Asio for the whole project. Boost 1.74's Asio uses
// std::exchange in awaitable.hpp without including <utility>, which breaks C++20
// builds with GCC 12; including it first here fixes that for every user.
#include <utility>

#include <boost/asio.hpp>

namespace tgw::infra::net {
namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
using udp = boost::asio::ip::udp;
}  // namespace tgw::infra::net
