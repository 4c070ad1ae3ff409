#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "infra/metrics/atomic_histogram.hpp"

namespace tgw::infra::http {

/// Why a connection was refused on accept, or ended by the server rather than by its
/// client. Each is a counter; none is logged above debug.
enum class close_reason : std::uint8_t {
  refused_max_connections,  ///< over server_limits::max_connections
  refused_address_limit,    ///< over server_limits::max_connections_per_address
  header_timeout,           ///< the request head did not arrive in time
  request_timeout,          ///< body, answer or write not done in time
  idle_timeout,             ///< a kept-alive connection stayed silent
  header_too_large,         ///< 431
  body_too_large,           ///< 413
  malformed,                ///< 400: not HTTP/1.x, or a target that is no path
  tls_handshake,            ///< the TLS handshake failed, or was not done in time
  stream_stalled,           ///< a streamed body's write not taken in time
};
inline constexpr std::size_t close_reason_count = 10;

/// The label of a reason in metrics: "refused_address_limit", "header_timeout", ...
[[nodiscard]] constexpr std::string_view to_string(close_reason r) noexcept {
  constexpr std::array<std::string_view, close_reason_count> names = {"refused_max_connections",
                                                                      "refused_address_limit",
                                                                      "header_timeout",
                                                                      "request_timeout",
                                                                      "idle_timeout",
                                                                      "header_too_large",
                                                                      "body_too_large",
                                                                      "malformed",
                                                                      "tls_handshake",
                                                                      "stream_stalled"};
  return names[static_cast<std::size_t>(r)];
}

/// The statuses counted each on its own; any other counts as "other".
inline constexpr std::array<unsigned, 24> counted_statuses = {
    200, 201, 202, 204, 301, 304, 400, 401, 403, 404, 405, 406,
    408, 409, 410, 413, 415, 422, 429, 431, 500, 501, 503, 504};

/// Upper bounds, in seconds, of the request latency buckets: from a request read whole
/// to its answer (a streamed one: its head) handed to the socket.
inline constexpr std::array<double, 15> latency_bounds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

/// The answers of one route: counts by status, and their latency.
struct route_stats {
  route_stats(std::string m, std::string p) : method(std::move(m)), pattern(std::move(p)) {}
  const std::string method;   ///< "GET"; empty for requests no route took
  const std::string pattern;  ///< "/v1/devices/{imei}"; "unmatched" for those
  std::array<std::atomic<std::uint64_t>, counted_statuses.size() + 1> by_status{};
  metrics::atomic_histogram<latency_bounds.size()> latency{latency_bounds};

  void count(unsigned status, double seconds) noexcept {
    std::size_t i = 0;
    while (i < counted_statuses.size() && counted_statuses[i] != status) ++i;
    by_status[i].fetch_add(1, std::memory_order_relaxed);
    latency.observe(seconds);
  }
  /// The label of slot `i` of by_status: "200", ..., "other".
  [[nodiscard]] static std::string status_label(std::size_t i) {
    return i < counted_statuses.size() ? std::to_string(counted_statuses[i]) : "other";
  }
};

/// What a server has done, read at scrape time. Written by its io threads alone.
struct server_stats {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::int64_t> open{0};
  std::atomic<std::uint64_t> requests{0};
  /// Handlers that threw or dropped their responder without answering: a 500 went out.
  std::atomic<std::uint64_t> handler_failures{0};
  /// accept() failures (out of descriptors, mostly); accepting resumes after a pause.
  std::atomic<std::uint64_t> accept_failures{0};
  std::array<std::atomic<std::uint64_t>, close_reason_count> closed{};
  /// One per route, in the router's order, then one for requests no route took (404,
  /// 405, a malformed path). Filled by the server before it accepts its first client,
  /// never changed after.
  std::vector<std::unique_ptr<route_stats>> routes;

  void count(close_reason r) noexcept {
    closed[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t closed_for(close_reason r) const noexcept {
    return closed[static_cast<std::size_t>(r)].load(std::memory_order_relaxed);
  }
};

}  // namespace tgw::infra::http
