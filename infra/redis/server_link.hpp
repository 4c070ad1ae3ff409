#pragma once

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/redis_url.hpp"
#include "infra/redis/redis_value.hpp"
#include "infra/redis/reply_reader.hpp"
#include "infra/redis/resp_writer.hpp"
#include "infra/redis/socket_stream.hpp"

namespace tgw::infra::redis {

class tls_client_context;

/// One connection to one server: what every client is made of. It connects only when
/// told to (open), to the address it is given, so finding the server (a fixed address,
/// the sentinels' answer, a cluster's slot map) stays with the client.
///
/// The bytes go through a socket_stream (plain, or OpenSSL's TLS when the endpoint says
/// rediss), commands are written as RESP (resp_writer) and replies parsed by hiredis'
/// reader, so every client, subcommand and tool gets TLS from here alone. Each open
/// makes a new stream; AUTH, SELECT and the client name are applied every time, and a
/// first round trip (PING when nothing else is sent) proves the server answers. The
/// log-in waits at most the connect timeout for each reply, so a server that takes the
/// connection and stays silent is found in seconds; a command waits up to the IO
/// timeout for each piece of its reply. A `-READONLY` reply (the server was demoted
/// under us) closes the link like an IO error, so that the client looks for the master
/// again.
class server_link {
 public:
  struct settings {
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds io_timeout{2000};
    std::string client_name;
  };

  explicit server_link(settings s) : settings_(std::move(s)) {}
  ~server_link() { close(); }
  server_link(const server_link&) = delete;
  server_link& operator=(const server_link&) = delete;

  /// Connects to `target` (its host and port or socket, login and database), closing
  /// any previous context. `label` names the server in `error`.
  bool open(const endpoint& target, std::string_view label, std::string& error);
  [[nodiscard]] bool is_open() const noexcept { return stream_.is_open(); }
  void close() noexcept;

  /// On an open link only; a closed one answers an unreachable failure ("not connected").
  value command(std::span<const std::string_view> argv);
  value command(std::initializer_list<std::string_view> argv) {
    return command(std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands);
  /// Writes commands already in the wire protocol; false with `failed` set (a transport
  /// failure) when they could not be written.
  bool send_encoded(std::string_view commands, value& failed);
  std::vector<value> receive_replies(std::size_t count);
  /// A subscription's next message, waiting up to `wait` for it: nullopt when none came
  /// (the link stays open), a transport failure when the link failed.
  std::optional<value> next_message(std::chrono::milliseconds wait);

  /// Takes a connected socket instead of connecting (tests, the fuzz target): the
  /// stream's handshake on it, then the link is open with nothing sent.
  bool adopt(int fd, const endpoint& target, std::string_view label, std::string& error);

 private:
  /// What open() and adopt() do first: a closed link, a fresh parser, and the TLS
  /// context when the endpoint asks for TLS (false with `error` when it cannot be made).
  bool start(const endpoint& target, std::string_view label,
             std::shared_ptr<const tls_client_context>& tls, std::string& error);
  /// Closes the link and says why, as a transport failure of `kind`.
  value io_failure(std::string_view why, failure_kind kind = failure_kind::unreachable);
  /// The next reply, waiting up to `wait` for each piece; nullopt with `timed_out` when
  /// nothing completed in time, or a transport failure when the link failed (it is
  /// closed then).
  std::optional<value> read_reply(std::chrono::milliseconds wait, bool& timed_out);
  bool flush(std::string_view bytes, value& failed);
  void close_if_demoted(const value& reply) noexcept;
  /// A log-in command's reply within the connect timeout; false with `error` set.
  bool log_in_step(std::initializer_list<std::string_view> argv, std::string_view what,
                   value& reply, std::string& error);

  settings settings_;
  socket_stream stream_;
  reply_reader reader_;
  resp_writer writer_;
  std::string label_;
  bool answered_ = false;  ///< A reply came on this connection (for a close's message).
};

}  // namespace tgw::infra::redis
