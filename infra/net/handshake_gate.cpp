#include "infra/net/handshake_gate.hpp"

#include <utility>

namespace tgw::infra::net {

bool handshake_gate::enter(start_fn start, std::uint64_t& ticket) {
  const std::lock_guard lock(mutex_);
  if (limit_ == 0 || running_ < limit_) {
    ++running_;
    return true;
  }
  ticket = ++last_ticket_;
  waiting_.emplace_back(ticket, std::move(start));
  return false;
}

void handshake_gate::withdraw(std::uint64_t ticket) {
  const std::lock_guard lock(mutex_);
  // Tickets rise along the line: the search stops at the first one past it.
  for (auto it = waiting_.begin(); it != waiting_.end() && it->first <= ticket; ++it) {
    if (it->first == ticket) {
      waiting_.erase(it);
      return;
    }
  }
}

void handshake_gate::leave() {
  for (;;) {
    start_fn next;
    {
      const std::lock_guard lock(mutex_);
      if (waiting_.empty()) {
        --running_;
        return;
      }
      // The slot passes straight to the next in line: running_ stays.
      next = std::move(waiting_.front().second);
      waiting_.pop_front();
    }
    // Outside the lock: the callback posts to its connection's thread.
    if (next()) return;
  }
}

std::size_t handshake_gate::running() const {
  const std::lock_guard lock(mutex_);
  return running_;
}

std::size_t handshake_gate::waiting() const {
  const std::lock_guard lock(mutex_);
  return waiting_.size();
}

}  // namespace tgw::infra::net
