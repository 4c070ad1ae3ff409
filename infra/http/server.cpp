#include "infra/http/server.hpp"

#include <chrono>

#include <openssl/ssl.h>

#include "infra/http/connection.hpp"
#include "infra/net/io_pool.hpp"
#include "infra/net/tls_context.hpp"

namespace tgw::infra::http {
namespace {

// After accept() fails (out of descriptors, mostly) the listener pauses this long
// rather than fail again at once in a loop that would take the io thread.
constexpr std::chrono::milliseconds accept_pause{100};

// "127.0.0.1:9127", "[::1]:9127", "localhost:9127" as an endpoint; a name is resolved
// once, here, at start-up.
tcp::endpoint endpoint_of(const std::string& address, asio::io_context& io) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos)
    throw listen_error("cannot listen on '" + address + "': not host:port", false);
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  error_code ec;
  tcp::resolver resolver(io);
  const auto found = resolver.resolve(host, port, tcp::resolver::passive, ec);
  if (ec || found.empty())
    throw listen_error("cannot listen on " + address + ": " +
                           (ec ? ec.message() : std::string("the name has no address")),
                       false);
  return found.begin()->endpoint();
}

}  // namespace

struct server::impl {
  impl(const std::string& address, router routes, server_limits limits,
       std::shared_ptr<server_stats> stats, std::size_t threads,
       std::shared_ptr<net::tls_context_source> tls_source)
      : state(std::make_shared<server_state>(limits, std::move(routes), std::move(stats))),
        tls(std::move(tls_source)),
        pool(threads, thread_name),
        acceptor(pool.front()),
        pause(pool.front()) {
    if (state->stats->routes.empty()) {
      for (auto& [method, pattern] : state->routes.listing())
        state->stats->routes.push_back(std::make_unique<route_stats>(method, pattern));
      state->stats->routes.push_back(std::make_unique<route_stats>("", "unmatched"));
    }
    const tcp::endpoint where = endpoint_of(address, pool.front());
    error_code ec;
    acceptor.open(where.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(where, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec == asio::error::address_in_use)
      throw listen_error(address + " is in use by another listener", true);
    if (ec) throw listen_error("cannot listen on " + address + ": " + ec.message(), false);
    port = acceptor.local_endpoint().port();
    accept_next();
    pool.start();
  }

  ~impl() {
    {
      const std::lock_guard lock(state->alive_mutex);
      state->alive = false;
    }
    // The io_contexts stop with their handlers pending; destroying them (with the pool,
    // after the acceptor) destroys those handlers and so every connection they hold.
    pool.stop();
    pool.join();
  }

  void accept_next() {
    const std::size_t io = pool.next_index();
    acceptor.async_accept(pool.at(io).get_executor(),
                          [this, io](const error_code& ec, tcp::socket socket) {
                            if (ec == asio::error::operation_aborted) return;
                            if (ec) {
                              state->stats->accept_failures.fetch_add(1, std::memory_order_relaxed);
                              pause.expires_after(accept_pause);
                              pause.async_wait([this](const error_code& e) {
                                if (!e) accept_next();
                              });
                              return;
                            }
                            admit(std::move(socket), io);
                            accept_next();
                          });
  }

  void admit(tcp::socket socket, std::size_t io) {
    error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return;  // gone already; the socket closes with its object
    std::string key = address_key(peer.address(), state->limits.ipv6_prefix_bits);
    switch (state->addresses.admit(key)) {
      case address_table::verdict::over_total:
        state->stats->count(close_reason::refused_max_connections);
        return;
      case address_table::verdict::over_address:
        state->stats->count(close_reason::refused_address_limit);
        return;
      case address_table::verdict::admitted:
        break;
    }
    state->stats->accepted.fetch_add(1, std::memory_order_relaxed);
    // An IPv4 client of a dual-stack socket is named as IPv4, as the table counts it.
    const auto& a = peer.address();
    const std::string name =
        a.is_v6() && a.to_v6().is_v4_mapped()
            ? asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).to_string()
            : a.to_string();
    std::shared_ptr<connection_base> c;
    if (tls) {
      const auto& context = asio_context();
      c = std::make_shared<tls_connection>(ssl_stream(std::move(socket), *context), state,
                                           std::move(key), name, context);
    } else {
      c = std::make_shared<plain_connection>(std::move(socket), state, std::move(key), name);
    }
    asio::post(pool.at(io), [c] { c->start(); });
  }

  // Asio's view of the context in force: made anew when a reload replaced it, and kept
  // by each connection made with it. Asio frees what it wraps, so it wraps a reference
  // of its own. On the acceptor's thread only.
  const std::shared_ptr<asio::ssl::context>& asio_context() {
    auto current = tls->current();
    if (current != wrapped) {
      SSL_CTX_up_ref(current->native());
      wrapping = std::make_shared<asio::ssl::context>(current->native());
      wrapped = std::move(current);
    }
    return wrapping;
  }

  const std::shared_ptr<server_state> state;
  const std::shared_ptr<net::tls_context_source> tls;
  std::shared_ptr<const net::tls_server_context> wrapped;
  std::shared_ptr<asio::ssl::context> wrapping;
  net::io_pool pool;
  tcp::acceptor acceptor;
  asio::steady_timer pause;
  std::uint16_t port = 0;
};

server::server(const std::string& address, router routes, server_limits limits,
               std::shared_ptr<server_stats> stats, std::size_t io_threads,
               std::shared_ptr<net::tls_context_source> tls)
    : impl_(std::make_unique<impl>(address, std::move(routes), limits,
                                   stats ? std::move(stats) : std::make_shared<server_stats>(),
                                   io_threads, std::move(tls))) {}

server::~server() = default;

std::uint16_t server::port() const noexcept {
  return impl_->port;
}

const server_stats& server::stats() const noexcept {
  return *impl_->state->stats;
}

}  // namespace tgw::infra::http
