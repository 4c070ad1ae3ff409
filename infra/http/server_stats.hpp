#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

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
};
inline constexpr std::size_t close_reason_count = 8;

/// The label of a reason in metrics: "refused_address_limit", "header_timeout", ...
[[nodiscard]] constexpr std::string_view to_string(close_reason r) noexcept {
  constexpr std::array<std::string_view, close_reason_count> names = {"refused_max_connections",
                                                                      "refused_address_limit",
                                                                      "header_timeout",
                                                                      "request_timeout",
                                                                      "idle_timeout",
                                                                      "header_too_large",
                                                                      "body_too_large",
                                                                      "malformed"};
  return names[static_cast<std::size_t>(r)];
}

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

  void count(close_reason r) noexcept {
    closed[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t closed_for(close_reason r) const noexcept {
    return closed[static_cast<std::size_t>(r)].load(std::memory_order_relaxed);
  }
};

}  // namespace tgw::infra::http
