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

// Posts `f` to `io` while the server lives. Every way in from another thread goes
// through here: once the server has cleared `alive`, its io_contexts are going, and a
// post to one would outlive it.
template <typename F>
bool post_while_alive(server_state& state, const asio::any_io_executor& io, F&& f) {
  const std::lock_guard lock(state.alive_mutex);
  if (!state.alive) return false;
  asio::post(io, std::forward<F>(f));
  return true;
}

// A responder's way back to its connection.
class connection_reply final : public reply_sink {
 public:
  connection_reply(std::shared_ptr<server_state> state, asio::any_io_executor io,
                   std::weak_ptr<connection_base> to, std::uint64_t generation)
      : state_(std::move(state)), io_(std::move(io)), to_(std::move(to)), generation_(generation) {}

  void deliver(std::optional<response> answer) override {
    post_while_alive(*state_, io_,
                     [to = to_, generation = generation_, answer = std::move(answer)]() mutable {
                       if (const auto c = to.lock()) c->answer(std::move(answer), generation);
                     });
  }

  std::shared_ptr<body_stream> open_stream(response head) override {
    // The head and every chunk after it go through one strand, in the order they were
    // given. A post to the io_context from its own thread runs only once the handler
    // there returns: a chunk pushed meanwhile from another thread would come before
    // the stream is open, and be dropped.
    const asio::any_io_executor ordered = asio::make_strand(io_);
    auto channel = std::make_shared<stream_channel>(state_, ordered, to_,
                                                    state_->limits.max_stream_queue_bytes);
    const bool posted = post_while_alive(
        *state_, ordered,
        [to = to_, generation = generation_, head = std::move(head), channel]() mutable {
          if (const auto c = to.lock())
            c->open_stream(std::move(head), std::move(channel), generation);
          else
            channel->finished();
        });
    if (!posted) channel->finished();
    return channel;
  }

 private:
  const std::shared_ptr<server_state> state_;
  const asio::any_io_executor io_;
  const std::weak_ptr<connection_base> to_;
  const std::uint64_t generation_;
};

// The code and words of a refusal of what a client sent.
std::pair<std::string_view, std::string_view> refusal_words(unsigned status) {
  switch (status) {
    case 413:
      return {"body_too_large", "payload too large"};
    case 431:
      return {"headers_too_large", "request header fields too large"};
    default:
      return {"malformed_request", "bad request"};
  }
}

}  // namespace

template <typename F>
bool stream_channel::post(F&& f) {
  return post_while_alive(*state_, io_, std::forward<F>(f));
}

push_result stream_channel::push(std::shared_ptr<const std::string> chunk) {
  if (ended() || finishing_.load(std::memory_order_acquire)) return push_result::ended;
  if (!chunk || chunk->empty()) return push_result::queued;
  const std::size_t n = chunk->size();
  const std::size_t before = queued_.fetch_add(n, std::memory_order_relaxed);
  // A chunk larger than the whole budget still goes to a stream that holds nothing.
  if (before > 0 && before + n > budget_) {
    queued_.fetch_sub(n, std::memory_order_relaxed);
    return push_result::over_budget;
  }
  if (!post([to = to_, chunk = std::move(chunk)]() mutable {
        if (const auto c = to.lock()) c->stream_chunk(std::move(chunk));
      })) {
    finished();
    return push_result::ended;
  }
  return push_result::queued;
}

void stream_channel::end(std::string last) {
  if (finishing_.exchange(true)) return;
  if (!post([to = to_, last = std::move(last)]() mutable {
        if (const auto c = to.lock()) c->stream_finish(std::move(last), false);
      }))
    finished();
}

void stream_channel::cut(std::string last) {
  if (finishing_.exchange(true)) return;
  if (!post([to = to_, last = std::move(last)]() mutable {
        if (const auto c = to.lock()) c->stream_finish(std::move(last), true);
      }))
    finished();
}

void stream_channel::on_end(std::function<void()> done) {
  {
    const std::lock_guard lock(callbacks_mutex_);
    if (!ended()) {
      callbacks_.push_back(std::move(done));
      return;
    }
  }
  if (done) done();
}

void stream_channel::finished() {
  std::vector<std::function<void()>> run;
  {
    const std::lock_guard lock(callbacks_mutex_);
    if (ended_.exchange(true, std::memory_order_acq_rel)) return;
    run.swap(callbacks_);
  }
  for (auto& f : run)
    if (f) f();
}

template <typename Stream>
basic_connection<Stream>::basic_connection(Stream stream, std::shared_ptr<server_state> state,
                                           std::string address_key, std::string peer,
                                           std::shared_ptr<const void> holds)
    : holds_(std::move(holds)),
      stream_(std::move(stream)),
      timer_(stream_.get_executor()),
      // A head, and what one read brings beyond it; the body goes to the parser's string.
      buffer_(std::size_t{state->limits.max_header_bytes} + std::size_t{16} * 1024),
      state_(std::move(state)),
      address_key_(std::move(address_key)),
      peer_(std::move(peer)) {
  state_->stats->open.fetch_add(1, std::memory_order_relaxed);
}

template <typename Stream>
basic_connection<Stream>::~basic_connection() {
  if (channel_) channel_->finished();
  state_->addresses.release(address_key_);
  state_->stats->open.fetch_sub(1, std::memory_order_relaxed);
}

template <typename Stream>
void basic_connection<Stream>::start() {
  // A new connection owes its whole head within the header deadline, from now: a client
  // that connects and says nothing is gone as soon as one that sends a byte a second.
  // Over TLS the handshake comes first, within the same deadline.
  if constexpr (tls) {
    phase_ = phase::handshake;
    arm(state_->limits.header_timeout, close_reason::tls_handshake);
    stream_.async_handshake(asio::ssl::stream_base::server, [self = self()](const error_code& ec) {
      if (self->phase_ == phase::closed) return;
      if (ec) {
        self->state_->stats->count(close_reason::tls_handshake);
        return self->close();
      }
      self->arm(self->state_->limits.header_timeout, close_reason::header_timeout);
      self->read_head();
    });
  } else {
    arm(state_->limits.header_timeout, close_reason::header_timeout);
    read_head();
  }
}

template <typename Stream>
void basic_connection<Stream>::read_head() {
  phase_ = phase::head;
  parser_.emplace();
  hold_to_limits(*parser_, state_->limits);
  bhttp::async_read_header(
      stream_, buffer_, *parser_,
      [self = self()](const error_code& ec, std::size_t) { self->on_head(ec); });
}

template <typename Stream>
void basic_connection<Stream>::on_head(const error_code& ec) {
  if (phase_ == phase::closed) return;
  if (ec) return fail(ec);
  const auto& head = parser_->get();
  if (const auto refused = refusal_for(head)) return refuse(refused->status, refused->reason);
  arm(state_->limits.request_timeout, close_reason::request_timeout);
  if (parser_->is_done()) return dispatch();
  if (beast::iequals(head[bhttp::field::expect], "100-continue")) {
    phase_ = phase::body;
    return asio::async_write(stream_, asio::buffer(continue_line.data(), continue_line.size()),
                             [self = self()](const error_code& e, std::size_t) {
                               if (self->phase_ == phase::closed) return;
                               if (e) return self->close();
                               self->read_body();
                             });
  }
  read_body();
}

template <typename Stream>
void basic_connection<Stream>::read_body() {
  phase_ = phase::body;
  bhttp::async_read(stream_, buffer_, *parser_,
                    [self = self()](const error_code& ec, std::size_t) { self->on_body(ec); });
}

template <typename Stream>
void basic_connection<Stream>::on_body(const error_code& ec) {
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

template <typename Stream>
void basic_connection<Stream>::dispatch() {
  phase_ = phase::handling;
  ++generation_;
  dispatched_at_ = std::chrono::steady_clock::now();
  state_->stats->requests.fetch_add(1, std::memory_order_relaxed);
  auto& head = parser_->get();
  keep_alive_ = head.keep_alive();
  request_version_ = head.version();
  head_only_ = head.method() == bhttp::verb::head;
  request r = to_request(head, peer_);
  parser_.reset();
  route_match m = state_->routes.match(r.method, r.path);
  route_index_ = m.index;
  switch (m.result) {
    case route_match::outcome::malformed_path:
      return send(state_->routes.refusal(400, "malformed_path",
                                         "bad request: malformed percent escape in the path"),
                  keep_alive_);
    case route_match::outcome::not_found:
      return send(state_->routes.refusal(404, "not_found", "not found"), keep_alive_);
    case route_match::outcome::wrong_method: {
      response wrong = state_->routes.refusal(405, "method_not_allowed", "method not allowed");
      wrong.headers.emplace_back("Allow", std::move(m.allow));
      return send(std::move(wrong), keep_alive_);
    }
    case route_match::outcome::found:
      break;
  }
  // A route that waits on purpose has a deadline of its own, from the end of the head.
  if (m.request_timeout)
    arm(*m.request_timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - dispatched_at_),
        close_reason::request_timeout);
  r.params = std::move(m.params);
  responder done(std::make_shared<connection_reply>(state_, stream_.get_executor(),
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

template <typename Stream>
void basic_connection<Stream>::count_answer(unsigned status) {
  const auto& routes = state_->stats->routes;
  if (route_index_ >= routes.size()) return;
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - dispatched_at_;
  routes[route_index_]->count(status, took.count());
}

template <typename Stream>
void basic_connection<Stream>::answer(std::optional<response> given, std::uint64_t generation) {
  if (phase_ != phase::handling || generation != generation_) return;
  if (!given) {
    state_->stats->handler_failures.fetch_add(1, std::memory_order_relaxed);
    given = state_->routes.refusal(500, "internal", "internal error");
  }
  send(std::move(*given), keep_alive_);
}

template <typename Stream>
void basic_connection<Stream>::send(response r, bool keep_alive) {
  if (phase_ == phase::handling) count_answer(r.status);
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
  bhttp::async_write(stream_, response_,
                     [self = self(), keep_alive](const error_code& ec, std::size_t) {
                       self->on_written(ec, keep_alive);
                     });
}

template <typename Stream>
void basic_connection<Stream>::on_written(const error_code& ec, bool keep_alive) {
  if (phase_ == phase::closed) return;
  if (ec || !keep_alive) {
    error_code ignored;
    socket().shutdown(tcp::socket::shutdown_send, ignored);
    return close();
  }
  response_ = {};
  await_next();
}

template <typename Stream>
void basic_connection<Stream>::await_next() {
  phase_ = phase::idle;
  if (buffer_.size() > 0) {  // a pipelined request is already here
    arm(state_->limits.header_timeout, close_reason::header_timeout);
    return read_head();
  }
  if constexpr (tls) {
    // OpenSSL may hold the next request's records already, where no socket readiness
    // would show them: the read starts at once, and the idle deadline stands for the
    // head's until it is read.
    arm(state_->limits.idle_timeout, close_reason::idle_timeout);
    read_head();
  } else {
    arm(state_->limits.idle_timeout, close_reason::idle_timeout);
    socket().async_wait(tcp::socket::wait_read, [self = self()](const error_code& ec) {
      if (self->phase_ == phase::closed) return;
      if (ec) return self->close();
      self->arm(self->state_->limits.header_timeout, close_reason::header_timeout);
      self->read_head();
    });
  }
}

template <typename Stream>
void basic_connection<Stream>::open_stream(response head, std::shared_ptr<stream_channel> channel,
                                           std::uint64_t generation) {
  if (phase_ != phase::handling || generation != generation_) return channel->finished();
  count_answer(head.status);
  if (head_only_) {
    // HEAD: the head a GET would get, and no stream behind it.
    channel->finished();
    phase_ = phase::writing;
    head.body.clear();
    response_ = {};
    response_.version(11);
    response_.result(head.status);
    response_.set(bhttp::field::content_type, head.content_type);
    for (const auto& [name, value] : head.headers) response_.set(name, value);
    response_.keep_alive(false);
    bhttp::async_write(stream_, response_, [self = self()](const error_code& ec, std::size_t) {
      self->on_written(ec, false);
    });
    return;
  }
  phase_ = phase::streaming;
  channel_ = std::move(channel);
  disarm();
  auto& h = stream_head_.emplace();
  h.version(11);
  h.result(head.status);
  h.set(bhttp::field::content_type, head.content_type);
  for (const auto& [name, value] : head.headers) h.set(name, value);
  // The stream ends the connection: a client has nothing to send on it meanwhile.
  h.keep_alive(false);
  h.chunked(true);
  stream_serializer_.emplace(h);
  writing_ = true;
  arm(state_->limits.stream_write_timeout, close_reason::stream_stalled);
  bhttp::async_write_header(stream_, *stream_serializer_,
                            [self = self()](const error_code& ec, std::size_t) {
                              if (self->phase_ == phase::closed) return;
                              if (ec) return self->close();
                              self->head_written_ = true;
                              self->writing_ = false;
                              self->disarm();
                              self->watch_stream_reader();
                              self->write_stream();
                            });
}

template <typename Stream>
void basic_connection<Stream>::stream_chunk(std::shared_ptr<const std::string> chunk) {
  if (phase_ != phase::streaming || last_) {
    if (channel_) channel_->written(chunk->size());
    return;
  }
  queued_.push_back(std::move(chunk));
  write_stream();
}

template <typename Stream>
void basic_connection<Stream>::stream_finish(std::string last, bool cut) {
  if (phase_ != phase::streaming || last_) return;
  if (cut) {
    std::size_t dropped = 0;
    for (const auto& c : queued_) dropped += c->size();
    queued_.clear();
    channel_->written(dropped);
  }
  last_ = std::move(last);
  write_stream();
}

template <typename Stream>
void basic_connection<Stream>::write_stream() {
  if (phase_ != phase::streaming || writing_ || !head_written_) return;
  if (queued_.empty()) {
    if (!last_ || last_written_) return;
    // The last chunk: the producer's final words, then the end of the chunked body.
    last_written_ = true;
    writing_ = true;
    arm(state_->limits.stream_write_timeout, close_reason::stream_stalled);
    auto done = [self = self()](const error_code& ec, std::size_t) {
      if (self->phase_ == phase::closed) return;
      if (ec) return self->close();
      self->disarm();
      error_code ignored;
      self->socket().shutdown(tcp::socket::shutdown_send, ignored);
      self->close();
    };
    if (last_->empty())
      return asio::async_write(stream_, bhttp::make_chunk_last(), std::move(done));
    in_write_buffers_.assign({asio::buffer(*last_)});
    return asio::async_write(
        stream_, beast::buffers_cat(bhttp::make_chunk(in_write_buffers_), bhttp::make_chunk_last()),
        std::move(done));
  }
  // Every chunk queued goes out as one HTTP chunk, in one write.
  in_write_.assign(std::make_move_iterator(queued_.begin()),
                   std::make_move_iterator(queued_.end()));
  queued_.clear();
  in_write_buffers_.clear();
  in_write_bytes_ = 0;
  for (const auto& c : in_write_) {
    in_write_buffers_.push_back(asio::buffer(*c));
    in_write_bytes_ += c->size();
  }
  writing_ = true;
  arm(state_->limits.stream_write_timeout, close_reason::stream_stalled);
  asio::async_write(
      stream_, bhttp::make_chunk(in_write_buffers_),
      [self = self()](const error_code& ec, std::size_t) { self->on_stream_written(ec); });
}

template <typename Stream>
void basic_connection<Stream>::on_stream_written(const error_code& ec) {
  if (phase_ == phase::closed) return;
  writing_ = false;
  channel_->written(in_write_bytes_);
  in_write_.clear();
  in_write_buffers_.clear();
  in_write_bytes_ = 0;
  if (ec) return close();
  disarm();
  write_stream();
}

template <typename Stream>
void basic_connection<Stream>::watch_stream_reader() {
  stream_.async_read_some(asio::buffer(discard_),
                          [self = self()](const error_code& ec, std::size_t) {
                            if (self->phase_ == phase::closed) return;
                            // The client left (or broke the connection): the stream ends with it.
                            if (ec) return self->close();
                            self->watch_stream_reader();
                          });
}

template <typename Stream>
void basic_connection<Stream>::refuse(unsigned status, close_reason reason) {
  state_->stats->count(reason);
  head_only_ = false;
  // The refusal is written under a deadline of its own, counted already.
  arm(state_->limits.header_timeout, std::nullopt);
  const auto [code, words] = refusal_words(status);
  send(state_->routes.refusal(status, code, words), false);
}

template <typename Stream>
void basic_connection<Stream>::fail(const error_code& ec) {
  if (const auto refused = refusal_for(ec)) return refuse(refused->status, refused->reason);
  close();
}

template <typename Stream>
void basic_connection<Stream>::arm(std::chrono::milliseconds after,
                                   std::optional<close_reason> why) {
  deadline_reason_ = why;
  timer_.expires_after(after);
  timer_.async_wait([self = self(), token = ++deadline_token_](const error_code& ec) {
    if (ec || token != self->deadline_token_ || self->phase_ == phase::closed) return;
    self->on_deadline();
  });
}

template <typename Stream>
void basic_connection<Stream>::disarm() {
  ++deadline_token_;
  timer_.cancel();
}

template <typename Stream>
void basic_connection<Stream>::on_deadline() {
  if (deadline_reason_) state_->stats->count(*deadline_reason_);
  if (phase_ == phase::handling) {
    // The handler is late: the client hears so, and its answer, if it comes, is dropped.
    arm(state_->limits.header_timeout, std::nullopt);
    return send(state_->routes.refusal(503, "deadline_passed", "request deadline passed"), false);
  }
  close();
}

template <typename Stream>
void basic_connection<Stream>::close() {
  phase_ = phase::closed;
  error_code ignored;
  timer_.cancel();
  socket().close(ignored);
  if (channel_) channel_->finished();
}

template class basic_connection<tcp::socket>;
template class basic_connection<ssl_stream>;

}  // namespace tgw::infra::http
