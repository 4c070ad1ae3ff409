#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::capture {

/// Bytes one side of a connection made available in order, and when.
struct stream_chunk {
  std::int64_t unix_us = 0;
  /// Position in the capture set (packet order across files), to interleave
  /// connections exactly as they were recorded.
  std::uint64_t order = 0;
  bool from_device = false;
  std::vector<std::uint8_t> bytes;
};

/// How a recorded connection ended.
enum class close_cause : std::uint8_t {
  none,  ///< The capture ended first.
  device_fin,
  device_rst,
  gateway_fin,
  gateway_rst,
};

/// One TCP connection reassembled from a capture: both byte streams, interleaved in
/// the order they became available.
struct recorded_connection {
  std::size_t number = 0;  ///< 1-based, in order of the first packet.
  net::ip_endpoint device;
  net::ip_endpoint gateway;
  std::int64_t first_us = 0;
  std::vector<stream_chunk> chunks;
  close_cause closed = close_cause::none;
  std::int64_t closed_us = 0;
  std::uint64_t closed_order = 0;
  /// What could not be reassembled (a gap, data cut by the snap length); the stream
  /// stops before it.
  std::vector<std::string> problems;
};

/// Everything read from a set of capture files.
struct capture_set {
  std::vector<recorded_connection> connections;
  /// File, offset and reason of every malformed or unreadable part.
  std::vector<std::string> errors;
  std::uint64_t packets = 0;
};

}  // namespace tgw::infra::capture
