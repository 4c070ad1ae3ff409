#pragma once

#include <memory>
#include <optional>

#include "infra/http/body_stream.hpp"
#include "infra/http/message.hpp"

namespace tgw::infra::http {

/// Where a responder's answer goes: the connection the request came on. The server
/// implements it; a test may stand in.
class reply_sink {
 public:
  virtual ~reply_sink() = default;
  /// Called once, from any thread; nothing means the handler gave up without an answer.
  virtual void deliver(std::optional<response> answer) = 0;
  /// Instead of deliver(): `head` goes out now and the body follows through the stream
  /// returned. A sink that cannot stream returns one that has ended.
  virtual std::shared_ptr<body_stream> open_stream(response head) {
    deliver(std::move(head));
    return ended_body_stream();
  }
};

/// Answers one request, once, from whichever thread has the answer: a handler may
/// return at once and answer later, when work it awaited (Redis, a device) is done.
/// The answer is posted to the connection's io thread; an answer that comes after the
/// request deadline, or after the client left, is dropped. A responder destroyed
/// without answering sends 500 and counts a handler failure.
class responder {
 public:
  explicit responder(std::shared_ptr<reply_sink> sink) : sink_(std::move(sink)) {}
  responder(responder&&) noexcept = default;
  responder& operator=(responder&& other) noexcept {
    if (this != &other) {
      give_up();
      sink_ = std::move(other.sink_);
    }
    return *this;
  }
  responder(const responder&) = delete;
  responder& operator=(const responder&) = delete;
  ~responder() { give_up(); }

  /// Sends the answer; later calls do nothing.
  void operator()(response answer) {
    if (auto sink = std::move(sink_)) sink->deliver(std::move(answer));
  }
  /// Answers with `head` (its body ignored) and a body written as it comes; later
  /// calls, and calls after an answer, return a stream that has ended.
  std::shared_ptr<body_stream> stream(response head) {
    if (auto sink = std::move(sink_)) return sink->open_stream(std::move(head));
    return ended_body_stream();
  }
  [[nodiscard]] bool answered() const noexcept { return !sink_; }

 private:
  void give_up() noexcept {
    if (auto sink = std::move(sink_)) sink->deliver(std::nullopt);
  }
  std::shared_ptr<reply_sink> sink_;
};

}  // namespace tgw::infra::http
