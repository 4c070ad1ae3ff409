#include "infra/net/tcp_server.hpp"

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "infra/log/log_budget.hpp"
#include "infra/log/refusal_log.hpp"
#include "infra/metrics/refusals.hpp"
#include "infra/net/connection_sweep.hpp"
#include "infra/net/tcp_connection.hpp"

namespace tgw::infra::net {
namespace {

constexpr std::chrono::milliseconds accept_pause{100};

log_budget& accept_failed_log() {
  static log_budget budget{"accept failed", log_kind::refusal};
  return budget;
}

}  // namespace

tcp_server::tcp_server(io_pool& pool, const tcp::endpoint& where, connection_limits limits,
                       listener_factory make_listener, std::shared_ptr<traffic_recorder> capture,
                       listener_security security)
    : pool_(pool),
      acceptor_(asio::make_strand(pool.front())),
      accept_pause_(acceptor_.get_executor()),
      make_listener_(std::move(make_listener)),
      capture_(std::move(capture)),
      settings_(std::make_shared<connection_settings>()) {
  settings_->limits = limits;
  // A deadline is met within an eighth of the shortest timeout, and at most a second late.
  const auto period = std::clamp(
      std::min({limits.first_byte_timeout, limits.handshake_timeout, limits.idle_timeout}) / 8,
      std::chrono::milliseconds{10}, std::chrono::milliseconds{1000});
  for (std::size_t i = 0; i < pool.size(); ++i) {
    sweeps_.push_back(std::make_shared<connection_sweep>(pool.at(i), period));
    sweeps_.back()->gate = security.handshakes;
  }
  settings_->security = std::move(security);
  acceptor_.open(where.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(where);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
}

tcp_server::~tcp_server() {
  settings_->alive = false;
  std::lock_guard lock(mutex_);
  live_.clear();
}

void tcp_server::start() {
  accept_next();
}

void tcp_server::stop_accepting() {
  asio::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    accept_pause_.cancel();
  });
}

void tcp_server::close_all(const std::string& reason) {
  std::lock_guard lock(mutex_);
  for (tcp_connection* c : live_) c->abort(reason);
}

void tcp_server::forget(tcp_connection* c) {
  std::lock_guard lock(mutex_);
  if (live_.erase(c) > 0) counters_.open.fetch_sub(1);
}

void tcp_server::accept_next() {
  const std::size_t io = pool_.next_index();
  acceptor_.async_accept(pool_.at(io).get_executor(), [this, io](
                                                          const boost::system::error_code& ec,
                                                          connection_socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors (or kernel memory) mostly: accepting again at once would spin
      // the thread on the same error while the backlog waits. Pause, then try again.
      counters_.accept_failures.fetch_add(1, std::memory_order_relaxed);
      accept_failed_log().log(spdlog::level::warn,
                              "device port: accept failed: {}; pausing accepts for {} ms "
                              "(raise the open-files limit if it is EMFILE)",
                              ec.message(), accept_pause.count());
      accept_pause_.expires_after(accept_pause);
      accept_pause_.async_wait([this](const boost::system::error_code& wait) {
        if (!wait && acceptor_.is_open()) accept_next();
      });
      return;
    }
    {
      if (static_cast<std::size_t>(counters_.open.load()) >= settings_->limits.max_connections) {
        counters_.refused_over_limit.fetch_add(1);
        if (settings_->security.refusals)
          settings_->security.refusals->count(metrics::refusal::max_connections);
        refusal_log(metrics::refusal::max_connections)
            .log(spdlog::level::warn,
                 "device port: {} connections open; refusing more (--max-connections)",
                 settings_->limits.max_connections);
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        counters_.accepted.fetch_add(1);
        auto c = std::make_shared<tcp_connection>(*this, std::move(socket), *sweeps_[io]);
        {
          std::lock_guard lock(mutex_);
          live_.insert(c.get());
          counters_.open.fetch_add(1);
        }
        c->start();
      }
    }
    accept_next();
  });
}

}  // namespace tgw::infra::net
