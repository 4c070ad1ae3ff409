#pragma once

// Asio's TLS support (OpenSSL), through the same <utility>-first include as the rest
// of Asio. Only the simulator uses Asio's ssl::stream; the gateway's device
// connections drive OpenSSL directly (infra/net/tls_channel.hpp says why).
#include "infra/net/asio.hpp"

#include <boost/asio/ssl.hpp>
