#include "infra/net/udp_server.hpp"

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>

#include "infra/log/refusal_log.hpp"
#include "infra/metrics/refusals.hpp"
#include "infra/net/asio_endpoint.hpp"

namespace tgw::infra::net {

struct udp_server::state : std::enable_shared_from_this<udp_server::state> {
  state(asio::io_context& io, handler h, udp_limits l, std::atomic<std::uint64_t>& counter)
      : strand(asio::make_strand(io)),
        socket(strand),
        on_datagram(std::move(h)),
        limits(std::move(l)),
        received(counter) {}

  // Whether the datagram from `from` may go on: its source within its rate, and room
  // in the backlog. A refusal is counted, and told within its log budget.
  bool admit(const udp::endpoint& sender) {
    if (limits.per_address) {
      const ip_endpoint a = to_ip_endpoint(sender);
      const bool trusted =
          std::ranges::any_of(limits.trusted, [&](const ip_prefix& p) { return p.contains(a); });
      if (!trusted && !limits.per_address->take_rate(limits.per_address->key_of(a))) {
        refuse(metrics::refusal::udp_rate, "udp: datagrams from {} over --udp-per-address-rate",
               limits.per_address->describe(a));
        return false;
      }
    }
    if (limits.backlog && !limits.backlog->admit()) {
      refuse(metrics::refusal::udp_backlog,
             "udp: {} datagrams already wait to be processed (--udp-backlog); dropping",
             std::to_string(limits.backlog->size()));
      return false;
    }
    return true;
  }

  void refuse(metrics::refusal why, fmt::format_string<std::string> line, std::string what) {
    if (limits.refusals) limits.refusals->count(why);
    infra::refusal_log(why).log(spdlog::level::warn, line, std::move(what));
  }

  void receive_next() {
    socket.async_receive_from(
        asio::buffer(buffer), from,
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          if (ec == asio::error::operation_aborted || !self->socket.is_open()) return;
          if (!ec && self->admit(self->from)) {
            self->received.fetch_add(1);
            std::weak_ptr<state> weak = self;
            const udp::endpoint to = self->from;
            ports::udp_reply reply = [weak, to](std::vector<std::uint8_t> bytes) {
              if (auto s = weak.lock()) s->send_to(std::move(bytes), to);
            };
            self->on_datagram(
                std::vector<std::uint8_t>(self->buffer.begin(),
                                          self->buffer.begin() + static_cast<std::ptrdiff_t>(n)),
                std::move(reply), to.address().to_string() + ":" + std::to_string(to.port()));
          }
          self->receive_next();
        });
  }

  void send_to(std::vector<std::uint8_t> bytes, const udp::endpoint& to) {
    asio::post(strand, [self = shared_from_this(), b = std::move(bytes), to]() mutable {
      if (!self->socket.is_open()) return;
      auto shared = std::make_shared<std::vector<std::uint8_t>>(std::move(b));
      self->socket.async_send_to(asio::buffer(*shared), to,
                                 [shared](const boost::system::error_code&, std::size_t) {});
    });
  }

  asio::strand<asio::io_context::executor_type> strand;
  udp::socket socket;
  handler on_datagram;
  udp_limits limits;
  std::atomic<std::uint64_t>& received;
  // The largest UDP payload; Teltonika datagrams stay far below it.
  std::array<std::uint8_t, 65507> buffer{};
  udp::endpoint from;
};

udp_server::udp_server(asio::io_context& io, const udp::endpoint& where, handler on_datagram,
                       udp_limits limits)
    : state_(std::make_shared<state>(io, std::move(on_datagram), std::move(limits), received_)) {
  state_->socket.open(where.protocol());
  state_->socket.set_option(udp::socket::reuse_address(true));
  state_->socket.bind(where);
  port_ = state_->socket.local_endpoint().port();
}

udp_server::~udp_server() {
  stop();
}

void udp_server::start() {
  asio::post(state_->strand, [s = state_] { s->receive_next(); });
}

void udp_server::stop() {
  asio::post(state_->strand, [s = state_] {
    boost::system::error_code ec;
    s->socket.close(ec);
  });
}

}  // namespace tgw::infra::net
