#pragma once

// The one way into Boost.Beast, after Asio's own (which fixes a missing include of
// Boost 1.74 under C++20). Only the server's sources include it: handlers see
// message.hpp, which holds no Beast type, so what they compile stays small.
#include "infra/net/asio_ssl.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http.hpp>

namespace tgw::infra::http {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using error_code = boost::system::error_code;
using request_parser = bhttp::request_parser<bhttp::string_body>;
/// A client connection over TLS: OpenSSL's records through Asio's stream.
using ssl_stream = asio::ssl::stream<tcp::socket>;
}  // namespace tgw::infra::http
