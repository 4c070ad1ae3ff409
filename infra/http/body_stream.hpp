#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tgw::infra::http {

/// What became of a chunk offered to a body_stream.
enum class push_result : std::uint8_t {
  queued,       ///< On its way to the client.
  over_budget,  ///< Not queued: the bytes queued and not yet written would pass the
                ///< stream's budget. The client reads slower than the producer writes;
                ///< the producer decides (usually cut()).
  ended,        ///< Not queued: the stream has ended (client gone, server stopping, cut).
};

/// The body of a response written as it is produced, for Server-Sent Events: the head
/// goes out at once (chunked, no Content-Length), then every chunk pushed, in order,
/// until end() or cut(), or until the client leaves. Every call is thread-safe and
/// never blocks: a chunk is posted to the connection's io thread, which writes it.
///
/// What a stream may hold is bounded: chunks queued and not yet written count against
/// server_limits::max_stream_queue_bytes, and a push that would pass it is refused, not
/// buffered; a write the client does not take within server_limits::stream_write_timeout
/// ends the stream and the connection. So a client that stops reading costs its budget
/// and a timer, never memory without bound.
class body_stream {
 public:
  virtual ~body_stream() = default;

  /// Queues `chunk` (shared: one buffer may go to many streams) after those before it.
  virtual push_result push(std::shared_ptr<const std::string> chunk) = 0;
  /// Ends the stream once what is queued is written, `last` after it (may be empty).
  virtual void end(std::string last) = 0;
  /// Ends the stream now: what is queued and not yet written is dropped, `last` is
  /// written in its place (the reason, for a client that reads too slowly), and the
  /// connection closes.
  virtual void cut(std::string last) = 0;
  /// Whether the stream has ended, whatever ended it.
  [[nodiscard]] virtual bool ended() const = 0;
  /// Bytes queued and not yet written.
  [[nodiscard]] virtual std::size_t queued_bytes() const = 0;
  /// Runs `done` once, on the connection's io thread (or at once, if the stream has
  /// ended already), when the stream ends for any reason: the producer's cue to forget
  /// it. It must not block.
  virtual void on_end(std::function<void()> done) = 0;
};

/// A stream that has ended before it began: what a request that can no longer be
/// answered gets (its deadline passed, its client left).
[[nodiscard]] std::shared_ptr<body_stream> ended_body_stream();

}  // namespace tgw::infra::http
