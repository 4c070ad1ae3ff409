#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "infra/http/address_table.hpp"
#include "infra/http/beast.hpp"
#include "infra/http/body_stream.hpp"
#include "infra/http/router.hpp"
#include "infra/http/server_limits.hpp"
#include "infra/http/server_stats.hpp"

namespace tgw::infra::http {

/// What a server's connections share. Held by each connection, so that one destroyed
/// with its io_context still finds its table and counters.
struct server_state {
  server_state(server_limits l, router r, std::shared_ptr<server_stats> s)
      : limits(l),
        routes(std::move(r)),
        stats(std::move(s)),
        addresses(l.max_connections, l.max_connections_per_address) {}
  const server_limits limits;
  const router routes;
  const std::shared_ptr<server_stats> stats;
  address_table addresses;
  /// An answer from another thread is posted to a connection's io_context only while
  /// `alive`, checked under the mutex: the server clears it before its io_contexts go.
  std::mutex alive_mutex;
  bool alive = true;
};

class stream_channel;

/// One client connection, on one io thread, whatever carries its bytes (a plain
/// socket, or TLS over one). What other threads reach it through: a responder's
/// answer, a streamed body's chunks, each posted to its io thread.
class connection_base : public std::enable_shared_from_this<connection_base> {
 public:
  virtual ~connection_base() = default;
  /// Starts reading the first request (after the TLS handshake); on the io thread.
  virtual void start() = 0;
  /// An answer given through a responder, on the io thread; `generation` names the
  /// request it answers, so that a late answer to an earlier one is dropped.
  virtual void answer(std::optional<response> given, std::uint64_t generation) = 0;
  /// The head of a streamed answer, on the io thread; its body follows through
  /// `channel`, which the connection ends when it closes.
  virtual void open_stream(response head, std::shared_ptr<stream_channel> channel,
                           std::uint64_t generation) = 0;
  /// A chunk of the open stream, on the io thread.
  virtual void stream_chunk(std::shared_ptr<const std::string> chunk) = 0;
  /// Ends the open stream with `last`: after what is queued, or (`cut`) in its place.
  virtual void stream_finish(std::string last, bool cut) = 0;
};

/// The body_stream of one connection: counts what is queued against the budget on the
/// producer's thread, posts each chunk to the connection's io thread through the
/// stream's strand (`io`), so that chunks come after the head and in the order pushed
/// whichever thread pushes them.
class stream_channel final : public body_stream {
 public:
  stream_channel(std::shared_ptr<server_state> state, asio::any_io_executor io,
                 std::weak_ptr<connection_base> to, std::size_t budget)
      : state_(std::move(state)), io_(std::move(io)), to_(std::move(to)), budget_(budget) {}

  push_result push(std::shared_ptr<const std::string> chunk) override;
  void end(std::string last) override;
  void cut(std::string last) override;
  [[nodiscard]] bool ended() const override { return ended_.load(std::memory_order_acquire); }
  [[nodiscard]] std::size_t queued_bytes() const override {
    return queued_.load(std::memory_order_relaxed);
  }
  void on_end(std::function<void()> done) override;

  /// Bytes written (or dropped): no longer queued. On the io thread.
  void written(std::size_t bytes) noexcept { queued_.fetch_sub(bytes, std::memory_order_relaxed); }
  /// The stream has ended: runs the on_end callbacks, once.
  void finished();

 private:
  /// Posts `f` to the connection's io thread while the server lives; false when not.
  template <typename F>
  bool post(F&& f);

  const std::shared_ptr<server_state> state_;
  const asio::any_io_executor io_;
  const std::weak_ptr<connection_base> to_;
  const std::size_t budget_;
  std::atomic<std::size_t> queued_{0};
  std::atomic<bool> ended_{false};
  std::atomic<bool> finishing_{false};
  std::mutex callbacks_mutex_;
  std::vector<std::function<void()>> callbacks_;
};

/// One client connection over `Stream` (tcp::socket, or an ssl::stream over one): it
/// reads a request head under the header deadline, the body and the answer under the
/// request deadline (the route's own, when it has one), writes the response, and waits
/// for the next request under the idle deadline. A streamed answer (body_stream) has
/// no request deadline: each of its writes has stream_write_timeout, and it ends the
/// connection when it ends. Everything runs on the io_context's one thread, so it
/// needs no strand.
template <typename Stream>
class basic_connection final : public connection_base {
 public:
  /// `stream` is connected (and, for TLS, not yet shaken hands); `holds` is kept as long
  /// as the stream (the TLS context it refers to).
  basic_connection(Stream stream, std::shared_ptr<server_state> state, std::string address_key,
                   std::string peer, std::shared_ptr<const void> holds = nullptr);
  ~basic_connection() override;
  basic_connection(const basic_connection&) = delete;
  basic_connection& operator=(const basic_connection&) = delete;

  void start() override;
  void answer(std::optional<response> given, std::uint64_t generation) override;
  void open_stream(response head, std::shared_ptr<stream_channel> channel,
                   std::uint64_t generation) override;
  void stream_chunk(std::shared_ptr<const std::string> chunk) override;
  void stream_finish(std::string last, bool cut) override;

 private:
  enum class phase : std::uint8_t {
    handshake,
    head,
    body,
    handling,
    writing,
    idle,
    streaming,
    closed
  };
  static constexpr bool tls = !std::is_same_v<Stream, tcp::socket>;

  std::shared_ptr<basic_connection> self() {
    return std::static_pointer_cast<basic_connection>(shared_from_this());
  }
  tcp::socket& socket() { return beast::get_lowest_layer(stream_); }
  void read_head();
  void on_head(const error_code& ec);
  void read_body();
  void on_body(const error_code& ec);
  void dispatch();
  void send(response r, bool keep_alive);
  void on_written(const error_code& ec, bool keep_alive);
  void await_next();
  void refuse(unsigned status, close_reason reason);
  void fail(const error_code& ec);
  /// Counts the answer to the request in hand under its route: status and latency.
  void count_answer(unsigned status);
  /// Writes what the stream has queued, as one chunk; the last chunk once it ends.
  void write_stream();
  void on_stream_written(const error_code& ec);
  /// Reads while a stream is open, for the one thing a client says then: that it left.
  void watch_stream_reader();
  /// Arms the one deadline of the phase; `why` is counted when it passes (nothing:
  /// the connection is closed uncounted, as when writing a refusal already counted).
  void arm(std::chrono::milliseconds after, std::optional<close_reason> why);
  void disarm();
  void on_deadline();
  void close();

  const std::shared_ptr<const void> holds_;
  Stream stream_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<request_parser> parser_;
  bhttp::response<bhttp::string_body> response_;
  const std::shared_ptr<server_state> state_;
  const std::string address_key_;
  const std::string peer_;
  phase phase_ = phase::head;
  std::optional<close_reason> deadline_reason_;
  std::uint64_t deadline_token_ = 0;
  std::uint64_t generation_ = 0;  ///< Requests dispatched on this connection.
  bool keep_alive_ = false;
  unsigned request_version_ = 11;  ///< Of the request being answered: 10 or 11.
  bool head_only_ = false;
  std::size_t route_index_ = 0;  ///< Of the request in hand, into server_stats::routes.
  std::chrono::steady_clock::time_point dispatched_at_{};

  // A streamed answer: its head, the chunks queued and those being written, and what
  // ends it.
  std::optional<bhttp::response<bhttp::empty_body>> stream_head_;
  std::optional<bhttp::response_serializer<bhttp::empty_body>> stream_serializer_;
  std::shared_ptr<stream_channel> channel_;
  std::deque<std::shared_ptr<const std::string>> queued_;
  std::vector<std::shared_ptr<const std::string>> in_write_;
  std::vector<asio::const_buffer> in_write_buffers_;
  std::size_t in_write_bytes_ = 0;
  bool head_written_ = false;
  bool writing_ = false;
  std::optional<std::string> last_;  ///< Set once the stream is to end: its last bytes.
  bool last_written_ = false;
  std::array<char, 512> discard_{};
};

using plain_connection = basic_connection<tcp::socket>;
using tls_connection = basic_connection<ssl_stream>;

}  // namespace tgw::infra::http
