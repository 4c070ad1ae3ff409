// The simulated device's TLS (--tls), driven like the gateway's: handshake, reads and
// writes each try OpenSSL first and wait for the socket only when it asks to.
#include "infra/sim/simulated_device.hpp"

#include <atomic>
#include <span>
#include <string>

#include <spdlog/spdlog.h>

namespace tgw::infra::sim {

namespace {

using boost::system::error_code;

}  // namespace

void simulated_device::continue_tls_handshake(std::uint32_t seq) {
  if (seq != conn_seq_ || phase_ != phase::connecting) return;
  std::string error;
  const net::tls_result r = tls_->handshake(error);
  switch (r.status) {
    case net::tls_status::done:
      begin_session();
      return;
    case net::tls_status::want_read:
    case net::tls_status::want_write:
      tcp_.async_wait(
          r.status == net::tls_status::want_read ? tcp_socket::wait_read : tcp_socket::wait_write,
          [this, seq](const error_code& ec) {
            if (seq != conn_seq_) return;
            if (ec) {
              connect_failed(ec);
              return;
            }
            continue_tls_handshake(seq);
          });
      return;
    case net::tls_status::closed:
    case net::tls_status::failed:
      tls_failed(error.empty() ? "the gateway closed the connection" : error);
      return;
  }
}

void simulated_device::tls_failed(const std::string& why) {
  // Said once at warn: a fleet pointed at a plain port fails every handshake alike.
  static std::atomic<bool> told{false};
  if (!told.exchange(true))
    spdlog::warn("device {}: TLS handshake failed: {} (counted as a connect failure)", imei_.str(),
                 why);
  connect_failed(net::asio::error::connection_aborted);
}

// Reads what OpenSSL has or the socket brings; the result goes to on_read, posted, as
// an Asio read's would be.
void simulated_device::tls_read(std::uint32_t seq) {
  if (seq != conn_seq_ || !tls_) return;
  std::string error;
  const net::tls_result r =
      tls_->read(std::span(rx_.data() + rx_end_, rx_.size() - rx_end_), error);
  switch (r.status) {
    case net::tls_status::done:
      net::asio::post(executor_, [this, seq, n = r.bytes] { on_read(seq, {}, n); });
      return;
    case net::tls_status::want_read:
    case net::tls_status::want_write:
      if (r.status == net::tls_status::want_read) tls_->release_buffers();
      tcp_.async_wait(
          r.status == net::tls_status::want_read ? tcp_socket::wait_read : tcp_socket::wait_write,
          [this, seq](const error_code& ec) {
            if (seq != conn_seq_) return;
            if (ec)
              on_read(seq, ec, 0);
            else
              tls_read(seq);
          });
      return;
    case net::tls_status::closed:
    case net::tls_status::failed:
      net::asio::post(executor_,
                      [this, seq] { on_read(seq, net::asio::error::connection_reset, 0); });
      return;
  }
}

// OpenSSL takes all the bytes or asks to be called again with the same ones.
void simulated_device::tls_write(std::uint32_t seq, std::span<const std::uint8_t> bytes) {
  std::string error;
  const net::tls_result r = tls_ ? tls_->write(bytes, error) : net::tls_result{};
  switch (r.status) {
    case net::tls_status::done:
      net::asio::post(executor_, [this, seq] { on_written(seq, {}); });
      return;
    case net::tls_status::want_read:
    case net::tls_status::want_write:
      tcp_.async_wait(
          r.status == net::tls_status::want_write ? tcp_socket::wait_write : tcp_socket::wait_read,
          [this, seq, bytes](const error_code& ec) {
            if (seq != conn_seq_ || ec) {
              on_written(seq, ec ? ec : net::asio::error::operation_aborted);
              return;
            }
            tls_write(seq, bytes);
          });
      return;
    case net::tls_status::closed:
    case net::tls_status::failed:
      net::asio::post(executor_,
                      [this, seq] { on_written(seq, net::asio::error::connection_reset); });
      return;
  }
}

}  // namespace tgw::infra::sim
