#include "infra/http/connection.hpp"

#include <exception>
#include <string>

#include <boost/beast/core/string.hpp>

#include "infra/http/request_reading.hpp"
#include "infra/log/log_budget.hpp"

namespace tgw::infra::http {
namespace {

// The interim answer to `Expect: 100-continue`: a client that asks waits for it (curl
// up to a second) before it sends its body.
constexpr std::string_view continue_line = "HTTP/1.1 100 Continue\r\n\r\n";

// A responder's way back to its connection: posted to the connection's io thread while
// the server lives, dropped once it has stopped.
class connection_reply final : public reply_sink {
 public:
  connection_reply(std::shared_ptr<server_state> state, asio::any_io_executor io,
                   std::weak_ptr<connection> to, std::uint64_t generation)
      : state_(std::move(state)), io_(std::move(io)), to_(std::move(to)), generation_(generation) {}

  void deliver(std::optional<response> answer) override {
    const std::lock_guard lock(state_->alive_mutex);
    if (!state_->alive) return;
    asio::post(io_, [to = to_, generation = generation_, answer = std::move(answer)]() mutable {
      if (const auto c = to.lock()) c->answer(std::move(answer), generation);
    });
  }

 private:
  const std::shared_ptr<server_state> state_;
  const asio::any_io_executor io_;
  const std::weak_ptr<connection> to_;
  const std::uint64_t generation_;
};

const char* refusal_text(unsigned status) {
  switch (status) {
    case 413:
      return "payload too large\n";
    case 431:
      return "request header fields too large\n";
    default:
      return "bad request\n";
  }
}

}  // namespace

connection::connection(tcp::socket socket, std::shared_ptr<server_state> state,
                       std::string address_key, std::string peer)
    : socket_(std::move(socket)),
      timer_(socket_.get_executor()),
      // A head, and what one read brings beyond it; the body goes to the parser's string.
      buffer_(std::size_t{state->limits.max_header_bytes} + std::size_t{16} * 1024),
      state_(std::move(state)),
      address_key_(std::move(address_key)),
      peer_(std::move(peer)) {
  state_->stats->open.fetch_add(1, std::memory_order_relaxed);
}

connection::~connection() {
  state_->addresses.release(address_key_);
  state_->stats->open.fetch_sub(1, std::memory_order_relaxed);
}

void connection::start() {
  // A new connection owes its whole head within the header deadline, from now: a client
  // that connects and says nothing is gone as soon as one that sends a byte a second.
  arm(state_->limits.header_timeout, close_reason::header_timeout);
  read_head();
}

void connection::read_head() {
  phase_ = phase::head;
  parser_.emplace();
  hold_to_limits(*parser_, state_->limits);
  bhttp::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_head(ec); });
}

void connection::on_head(const error_code& ec) {
  if (phase_ == phase::closed) return;
  if (ec) return fail(ec);
  const auto& head = parser_->get();
  if (const auto refused = refusal_for(head)) return refuse(refused->status, refused->reason);
  arm(state_->limits.request_timeout, close_reason::request_timeout);
  if (parser_->is_done()) return dispatch();
  if (beast::iequals(head[bhttp::field::expect], "100-continue")) {
    phase_ = phase::body;
    return asio::async_write(socket_, asio::buffer(continue_line.data(), continue_line.size()),
                             [self = shared_from_this()](const error_code& e, std::size_t) {
                               if (self->phase_ == phase::closed) return;
                               if (e) return self->close();
                               self->read_body();
                             });
  }
  read_body();
}

void connection::read_body() {
  phase_ = phase::body;
  bhttp::async_read(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_body(ec); });
}

void connection::on_body(const error_code& ec) {
  if (phase_ == phase::closed) return;
  if (ec) return fail(ec);
  dispatch();
}

namespace {

// A handler that throws is a bug; its line is written within a budget, as a client
// that finds the bug can call it as often as it likes.
infra::log_budget& handler_failure_log() {
  static infra::log_budget budget{"http handler failure", infra::log_kind::refusal};
  return budget;
}

}  // namespace

void connection::dispatch() {
  phase_ = phase::handling;
  ++generation_;
  state_->stats->requests.fetch_add(1, std::memory_order_relaxed);
  auto& head = parser_->get();
  keep_alive_ = head.keep_alive();
  request_version_ = head.version();
  head_only_ = head.method() == bhttp::verb::head;
  request r = to_request(head, peer_);
  parser_.reset();
  route_match m = state_->routes.match(r.method, r.path);
  switch (m.result) {
    case route_match::outcome::malformed_path:
      return send(response::text(400, "bad request: malformed percent escape in the path\n"),
                  keep_alive_);
    case route_match::outcome::not_found:
      return send(response::text(404, "not found\n"), keep_alive_);
    case route_match::outcome::wrong_method: {
      response wrong = response::text(405, "method not allowed\n");
      wrong.headers.emplace_back("Allow", std::move(m.allow));
      return send(std::move(wrong), keep_alive_);
    }
    case route_match::outcome::found:
      break;
  }
  r.params = std::move(m.params);
  responder done(std::make_shared<connection_reply>(state_, socket_.get_executor(),
                                                    weak_from_this(), generation_));
  const std::string path = r.path;
  try {
    (*m.run)(std::move(r), std::move(done));
  } catch (const std::exception& e) {
    // The responder died with the handler's frame and posted its 500, counted when it
    // arrives; an answer that came first stands. Nothing of the exception reaches the
    // client; the log gets it, within its budget, as a handler's bug to fix.
    handler_failure_log().log(spdlog::level::err, "http: the handler of {} threw: {}", path,
                              std::string(e.what()));
  } catch (...) {
    handler_failure_log().log(spdlog::level::err, "http: the handler of {} threw: {}", path,
                              std::string("an exception of unknown type"));
  }
}

void connection::answer(std::optional<response> given, std::uint64_t generation) {
  if (phase_ != phase::handling || generation != generation_) return;
  if (!given) {
    state_->stats->handler_failures.fetch_add(1, std::memory_order_relaxed);
    given = response::text(500, "internal error\n");
  }
  send(std::move(*given), keep_alive_);
}

void connection::send(response r, bool keep_alive) {
  phase_ = phase::writing;
  response_ = {};
  response_.version(11);
  response_.result(r.status);
  response_.set(bhttp::field::content_type, r.content_type);
  for (const auto& [name, value] : r.headers) response_.set(name, value);
  response_.keep_alive(keep_alive);
  // An HTTP/1.0 client that asked to keep the connection is told it is kept: it would
  // otherwise take the connection as closing and wait for the end of the stream.
  if (keep_alive && request_version_ == 10) response_.set(bhttp::field::connection, "keep-alive");
  response_.body() = std::move(r.body);
  response_.prepare_payload();
  // HEAD: the length GET would send, and no body.
  if (head_only_) response_.body().clear();
  bhttp::async_write(socket_, response_,
                     [self = shared_from_this(), keep_alive](const error_code& ec, std::size_t) {
                       self->on_written(ec, keep_alive);
                     });
}

void connection::on_written(const error_code& ec, bool keep_alive) {
  if (phase_ == phase::closed) return;
  if (ec || !keep_alive) {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    return close();
  }
  response_ = {};
  await_next();
}

void connection::await_next() {
  phase_ = phase::idle;
  if (buffer_.size() > 0) {  // a pipelined request is already here
    arm(state_->limits.header_timeout, close_reason::header_timeout);
    return read_head();
  }
  arm(state_->limits.idle_timeout, close_reason::idle_timeout);
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
    if (self->phase_ == phase::closed) return;
    if (ec) return self->close();
    self->arm(self->state_->limits.header_timeout, close_reason::header_timeout);
    self->read_head();
  });
}

void connection::refuse(unsigned status, close_reason reason) {
  state_->stats->count(reason);
  head_only_ = false;
  // The refusal is written under a deadline of its own, counted already.
  arm(state_->limits.header_timeout, std::nullopt);
  send(response::text(status, refusal_text(status)), false);
}

void connection::fail(const error_code& ec) {
  if (const auto refused = refusal_for(ec)) return refuse(refused->status, refused->reason);
  close();
}

void connection::arm(std::chrono::milliseconds after, std::optional<close_reason> why) {
  deadline_reason_ = why;
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this(), token = ++deadline_token_](const error_code& ec) {
    if (ec || token != self->deadline_token_ || self->phase_ == phase::closed) return;
    self->on_deadline();
  });
}

void connection::on_deadline() {
  if (deadline_reason_) state_->stats->count(*deadline_reason_);
  if (phase_ == phase::handling) {
    // The handler is late: the client hears so, and its answer, if it comes, is dropped.
    arm(state_->limits.header_timeout, std::nullopt);
    return send(response::text(503, "request deadline passed\n"), false);
  }
  close();
}

void connection::close() {
  phase_ = phase::closed;
  error_code ignored;
  timer_.cancel();
  socket_.close(ignored);
}

}  // namespace tgw::infra::http
