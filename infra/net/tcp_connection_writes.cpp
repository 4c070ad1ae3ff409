// A connection's writes: the queue of bytes for the device, written one buffer at a
// time, plain or through TLS.
#include "infra/net/tcp_connection.hpp"

#include <string>

namespace tgw::infra::net {

// On the connection's thread: bytes for the device, behind what is already queued.
void tcp_connection::queue_write(std::vector<std::uint8_t> b) {
  if (closed_) return;
  const auto& limits = settings_->limits;
  if (writes_.size() >= limits.max_write_queue_writes ||
      queued_bytes_ + b.size() > limits.max_write_queue_bytes) {
    // A device that sends and never reads: what it is owed would pile up here.
    refuse(metrics::refusal::write_queue,
           "the device reads nothing: " + std::to_string(writes_.size()) + " writes, " +
               std::to_string(queued_bytes_) +
               " bytes queued for it (--max-write-queue-bytes, --max-write-queue-writes)");
    return;
  }
  if (capture_) capture_->recorder->data(capture_->id, false, b);
  queued_bytes_ += static_cast<std::uint32_t>(b.size());
  writes_.push_back(std::move(b));
  if (!writing_) write_next();
}

void tcp_connection::write_next() {
  if (tls_) {
    write_tls();
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(writes_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->writing_ = false;
                      if (self->closed_) {
                        // The connection was shut down while this write was in flight; its buffer
                        // had to live until now.
                        self->writes_.clear();
                        return;
                      }
                      if (ec) {
                        self->shutdown("write failed: " + ec.message());
                        return;
                      }
                      self->wrote_front();
                    });
}

// OpenSSL copies the bytes into its record when the write succeeds; a write it
// could not finish is repeated with the same buffer once the socket is writable.
void tcp_connection::write_tls() {
  writing_ = true;
  std::string error;
  const tls_result r = tls_->write(writes_.front(), error);
  if (r.status == tls_status::done) {
    writing_ = false;
    wrote_front();
    return;
  }
  if (r.status == tls_status::want_write || r.status == tls_status::want_read) {
    socket_.async_wait(
        r.status == tls_status::want_write ? tcp::socket::wait_write : tcp::socket::wait_read,
        [self = shared_from_this()](const boost::system::error_code& ec) {
          self->writing_ = false;
          if (self->closed_) {
            self->writes_.clear();
            return;
          }
          if (ec) {
            self->shutdown("write failed: " + ec.message());
            return;
          }
          self->write_tls();
        });
    return;
  }
  writing_ = false;
  shutdown(r.status == tls_status::closed ? "peer closed" : "TLS write failed: " + error);
}

void tcp_connection::wrote_front() {
  queued_bytes_ -= static_cast<std::uint32_t>(writes_.front().size());
  writes_.erase(writes_.begin());
  if (!writes_.empty()) {
    write_next();
  } else if (close_after_writes_) {
    shutdown(*close_after_writes_);
  }
}

}  // namespace tgw::infra::net
