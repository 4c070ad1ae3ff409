#include "infra/net/handshake_gate.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace tgw::infra::net {

bool handshake_gate::enter(const std::string& address, start_fn start, evict_fn evict,
                           std::uint64_t& id, clock::time_point now) {
  evictions evict_now;
  {
    const std::lock_guard lock(mutex_);
    id = ++last_id_;
    if (settings_.limit == 0 || holders_.size() < settings_.limit) {
      hold_locked(id, address, std::move(evict));
      return true;
    }
    line_.push_back(waiter{id, address, std::move(start), std::move(evict)});
    rebalance_locked(now, evict_now);
  }
  for (auto& [fn, why] : evict_now) fn(why);
  return false;
}

void handshake_gate::waiting_on_peer(std::uint64_t id, bool waiting, clock::time_point now) {
  const std::lock_guard lock(mutex_);
  const auto it = holders_.find(id);
  if (it == holders_.end()) return;
  if (waiting && !it->second.waiting_on_peer) it->second.waiting_since = now;
  it->second.waiting_on_peer = waiting;
}

void handshake_gate::leave(std::uint64_t id) {
  for (;;) {
    start_fn next;
    {
      const std::lock_guard lock(mutex_);
      const auto held = holders_.find(id);
      if (held == holders_.end()) {
        // Not holding a slot: it gives up its place in line, if it has one.
        std::erase_if(line_, [id](const waiter& w) { return w.id == id; });
        return;
      }
      release_locked(held);
      if (line_.empty()) return;
      // The slot goes to the waiter whose address holds the fewest; the earliest of
      // those, so that the line stays in arrival order within an address.
      auto fairest = line_.begin();
      std::size_t fewest = std::numeric_limits<std::size_t>::max();
      for (auto it = line_.begin(); it != line_.end() && fewest > 0; ++it) {
        const std::size_t n = held_by_locked(it->address);
        if (n < fewest) {
          fewest = n;
          fairest = it;
        }
      }
      waiter w = std::move(*fairest);
      line_.erase(fairest);
      hold_locked(w.id, std::move(w.address), std::move(w.evict));
      id = w.id;
      next = std::move(w.start);
    }
    // Outside the lock: the callback posts to its connection's thread. A connection
    // already gone passes the slot on.
    if (next()) return;
  }
}

void handshake_gate::sweep(clock::time_point now) {
  evictions evict_now;
  {
    const std::lock_guard lock(mutex_);
    for (auto& [id, h] : holders_) {
      if (h.evicted || !h.waiting_on_peer || now - h.waiting_since < settings_.step_timeout)
        continue;
      h.evicted = true;
      evict_now.emplace_back(h.evict, eviction::stalled);
    }
    rebalance_locked(now, evict_now);
  }
  for (auto& [fn, why] : evict_now) fn(why);
}

std::size_t handshake_gate::running() const {
  const std::lock_guard lock(mutex_);
  return holders_.size();
}

std::size_t handshake_gate::waiting() const {
  const std::lock_guard lock(mutex_);
  return line_.size();
}

void handshake_gate::hold_locked(std::uint64_t id, std::string address, evict_fn evict) {
  ++held_[address];
  holders_.emplace(id, holder{std::move(address), std::move(evict)});
}

void handshake_gate::release_locked(std::unordered_map<std::uint64_t, holder>::iterator it) {
  const auto count = held_.find(it->second.address);
  if (count != held_.end() && --count->second == 0) held_.erase(count);
  holders_.erase(it);
}

// Each evicted handshake frees a slot once its connection has closed: the waiters
// those slots will serve need no other. For the rest, a handshake that may be
// preempted is, until none may.
void handshake_gate::rebalance_locked(clock::time_point now, evictions& out) {
  std::size_t freeing = 0;
  for (const auto& [id, h] : holders_) freeing += h.evicted ? 1 : 0;
  // A bounded look at the line: the work under the lock stays small however long the
  // line grows, and the sweep comes back to the rest.
  std::size_t looked = 0;
  for (const waiter& w : line_) {
    if (++looked > max_rebalanced) return;
    if (freeing > 0) {
      --freeing;
      continue;
    }
    if (preempt_for_locked(w.address, now, out)) continue;
    // No handshake may be evicted for an address that holds nothing: none may for any.
    if (held_by_locked(w.address) == 0) return;
  }
}

// The candidate is a handshake waiting on its peer for the grace period, not evicted
// yet, of an address that holds at least two slots more than `address`: after the
// move that address still holds no fewer than the waiter's. Of those, one of the
// address holding the most, and there the longest waiting.
bool handshake_gate::preempt_for_locked(const std::string& address, clock::time_point now,
                                        evictions& out) {
  const std::size_t mine = held_by_locked(address);
  holder* victim = nullptr;
  std::size_t victim_held = 0;
  for (auto& [id, h] : holders_) {
    if (h.evicted || !h.waiting_on_peer || now - h.waiting_since < settings_.grace) continue;
    const std::size_t theirs = held_by_locked(h.address);
    if (theirs < mine + 2) continue;
    if (victim == nullptr || theirs > victim_held ||
        (theirs == victim_held && h.waiting_since < victim->waiting_since)) {
      victim = &h;
      victim_held = theirs;
    }
  }
  if (victim == nullptr) return false;
  victim->evicted = true;
  out.emplace_back(victim->evict, eviction::preempted);
  return true;
}

std::size_t handshake_gate::held_by_locked(const std::string& address) const {
  const auto it = held_.find(address);
  return it == held_.end() ? 0 : it->second;
}

}  // namespace tgw::infra::net
