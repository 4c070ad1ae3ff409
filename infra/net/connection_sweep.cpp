// The deadline sweep: one timer per io context that closes its connections past their
// deadline.
#include "infra/net/connection_sweep.hpp"

#include "infra/net/tcp_connection.hpp"

namespace tgw::infra::net {

void connection_sweep::add(std::shared_ptr<tcp_connection> c) {
  c->sweep_slot_ = static_cast<std::uint32_t>(open.size());
  open.push_back(std::move(c));
  arm();
}

std::shared_ptr<tcp_connection> connection_sweep::remove(tcp_connection* c) {
  const std::size_t slot = c->sweep_slot_;
  if (slot >= open.size() || open[slot].get() != c) return nullptr;  // never added
  auto gone = std::move(open[slot]);
  if (slot + 1 != open.size()) {
    open[slot] = std::move(open.back());
    open[slot]->sweep_slot_ = static_cast<std::uint32_t>(slot);
  }
  open.pop_back();
  return gone;
}

// Ticks only while the context has connections: an idle instance does not wake.
void connection_sweep::arm() {
  if (armed || open.empty()) return;
  armed = true;
  timer.expires_after(period);
  timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();  // The server, and its sweeps, may be gone.
    if (!self) return;
    self->armed = false;
    if (!ec) self->sweep();
  });
}

// Walks every connection of the context, once a period: a load of its deadline each,
// a few milliseconds a second for 100,000 connections, and nothing per packet.
void connection_sweep::sweep() {
  const auto now = std::chrono::steady_clock::now();
  if (gate) gate->sweep(now);
  std::size_t i = 0;
  while (i < open.size()) {
    // A connection that closes leaves its slot to the last one: look at it again.
    if (!open[i]->close_if_past_deadline(now)) ++i;
  }
  arm();
}

}  // namespace tgw::infra::net
