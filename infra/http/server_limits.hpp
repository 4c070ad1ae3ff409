#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tgw::infra::http {

/// What one client may make the server spend. Every budget is enforced on the io
/// thread where the bytes arrive; going over it closes the connection (after a 4xx
/// where one can still be written) and moves a counter of server_stats, never a log
/// line above debug.
struct server_limits {
  /// From the accept, or from the first byte of a later request on a kept-alive
  /// connection, to the end of the request head. A client that connects and sends
  /// nothing, or a head byte by byte, is closed here: a probe or a scraper sends its
  /// whole head at once.
  std::chrono::milliseconds header_timeout{5'000};
  /// From the end of the head to the end of the response: the body, the handler's
  /// answer and the write. A handler that has not answered by then gets a 503 written
  /// for it; a client that does not read its response is closed.
  std::chrono::milliseconds request_timeout{10'000};
  /// Silence allowed between a response and the next request's first byte.
  std::chrono::milliseconds idle_timeout{15'000};
  /// Request line and header fields together; larger heads get 431 and a close.
  std::uint32_t max_header_bytes = 8 * 1024;
  /// Larger bodies (declared or sent) get 413 and a close.
  std::uint64_t max_body_bytes = std::uint64_t{64} * 1024;
  /// Connections open at once; further ones are closed on accept.
  std::size_t max_connections = 256;
  /// Connections open at once from one source address (IPv4, or an IPv6 prefix of
  /// ipv6_prefix_bits); further ones are closed on accept. Below max_connections, so
  /// that one address cannot take every slot and leave a probe none. 0: no cap.
  std::size_t max_connections_per_address = 16;
  unsigned ipv6_prefix_bits = 64;
  /// A streamed body (body_stream): a write the client does not take within this ends
  /// the stream and closes the connection. A client that reads keeps its stream.
  std::chrono::milliseconds stream_write_timeout{30'000};
  /// A streamed body's bytes queued and not yet written; a push past it is refused
  /// (push_result::over_budget) and the producer decides.
  std::size_t max_stream_queue_bytes = std::size_t{4} * 1024 * 1024;
};

}  // namespace tgw::infra::http
