#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "infra/http/address_table.hpp"
#include "infra/http/beast.hpp"
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

/// One client connection, on one io thread: it reads a request head under the header
/// deadline, the body and the answer under the request deadline, writes the response,
/// and waits for the next request under the idle deadline. Everything it does runs
/// on its io_context's one thread, so it needs no strand.
class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(tcp::socket socket, std::shared_ptr<server_state> state, std::string address_key,
             std::string peer);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Starts reading the first request; on the socket's io thread.
  void start();
  /// An answer given through a responder, on the io thread; `generation` names the
  /// request it answers, so that a late answer to an earlier one is dropped.
  void answer(std::optional<response> given, std::uint64_t generation);

 private:
  enum class phase : std::uint8_t { head, body, handling, writing, idle, closed };

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
  /// Arms the one deadline of the phase; `why` is counted when it passes (nothing:
  /// the connection is closed uncounted, as when writing a refusal already counted).
  void arm(std::chrono::milliseconds after, std::optional<close_reason> why);
  void on_deadline();
  void close();

  tcp::socket socket_;
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
};

}  // namespace tgw::infra::http
