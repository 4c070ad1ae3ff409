// The socket side of a session that tls_records carries: reading and opening
// records, sealing and sending, and the few protocol messages that follow a
// handshake (alerts, TLS 1.3 KeyUpdate and session tickets).

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "infra/net/tls_channel.hpp"

namespace tgw::infra::net {
namespace {

constexpr std::size_t max_record = tls_records::header_size + tls_records::max_body;

// One receive buffer per io thread, room for a partial record and a whole one after
// it: sessions hold no buffer between packets.
std::span<std::uint8_t> receive_scratch() {
  thread_local std::vector<std::uint8_t> scratch(2 * max_record);
  return scratch;
}

// Where a write is sealed, per io thread: only what the socket does not take at once
// is kept by the session, so an ACK costs no allocation.
std::vector<std::uint8_t>& send_scratch() {
  thread_local std::vector<std::uint8_t> scratch;
  scratch.clear();
  return scratch;
}

}  // namespace

void tls_channel::received(std::span<const std::uint8_t> bytes, bool drained) {
  fed_ = bytes;
  socket_.drained = drained;
}

tls_result tls_channel::records_read(std::span<std::uint8_t> into, std::string& error) {
  if (fed_.empty()) socket_.drained = false;
  for (;;) {
    if (!plain_.empty()) {
      const std::size_t n = std::min(into.size(), plain_.size());
      std::memcpy(into.data(), plain_.data(), n);
      plain_.erase(plain_.begin(), plain_.begin() + static_cast<std::ptrdiff_t>(n));
      return {tls_status::done, n};
    }
    if (peer_closed_) return {tls_status::closed, 0};

    const std::span<std::uint8_t> buffer = receive_scratch();
    const std::size_t kept = partial_.size();
    if (kept > 0) std::memcpy(buffer.data(), partial_.data(), kept);
    partial_.clear();
    std::size_t have = kept;
    if (!fed_.empty()) {
      // Opened first, behind the partial record; socket_.drained is what received()
      // was told. Both fit: the partial record is shorter than one, fed_ one at most.
      std::memcpy(buffer.data() + kept, fed_.data(), fed_.size());
      have += fed_.size();
      fed_ = {};
    } else {
      const std::size_t room = buffer.size() - kept;
      const ssize_t n = ::recv(socket_.fd, buffer.data() + kept, room, 0);
      if (n < 0) {
        const int e = errno;
        partial_.assign(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(kept));
        if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR) {
          socket_.drained = true;
          return {tls_status::want_read, 0};
        }
        error = std::strerror(e);
        return {tls_status::failed, 0};
      }
      if (n == 0) {
        // A device that loses power closes without close_notify: an ordinary close,
        // as with OpenSSL's SSL_OP_IGNORE_UNEXPECTED_EOF. Half a record is dropped.
        socket_.drained = true;
        return {tls_status::closed, 0};
      }
      socket_.drained = static_cast<std::size_t>(n) < room;
      have += static_cast<std::size_t>(n);
    }
    const std::size_t queued = out_.size();
    const tls_received got = records_->receive(buffer.first(have), server_, out_);
    if (!got.error.empty()) {
      error = got.error;
      return {tls_status::failed, 0};
    }
    // A KeyUpdate answered: it goes out now, before anything sealed after it.
    if (out_.size() > queued && flush(error) == tls_status::failed) return {tls_status::failed, 0};
    peer_closed_ = got.closed;
    const std::size_t plain = got.plain;
    partial_.assign(buffer.begin() + static_cast<std::ptrdiff_t>(got.used),
                    buffer.begin() + static_cast<std::ptrdiff_t>(have));
    if (plain > 0) {
      const std::size_t take = std::min(plain, into.size());
      std::memcpy(into.data(), buffer.data(), take);
      plain_.assign(buffer.begin() + static_cast<std::ptrdiff_t>(take),
                    buffer.begin() + static_cast<std::ptrdiff_t>(plain));
      return {tls_status::done, take};
    }
    if (peer_closed_) return {tls_status::closed, 0};
    if (socket_.drained) return {tls_status::want_read, 0};
    // Only part of a record, and the socket may hold the rest: read on.
  }
}

// Seals the caller's bytes once; a write the socket did not take whole is repeated
// by the caller with the same bytes, and only what is left is sent then.
tls_result tls_channel::records_write(std::span<const std::uint8_t> bytes, std::string& error) {
  if (!sealed_write_ && out_.empty()) {
    // The usual case: sealed and sent from the thread's scratch; only a rest the
    // socket did not take stays with the session, for the caller's repeat.
    std::vector<std::uint8_t>& sealed = send_scratch();
    records_->seal(tls_content::application_data, bytes, sealed);
    std::size_t sent = 0;
    const tls_status s = send_from(sealed, sent, error);
    if (s == tls_status::done) return {tls_status::done, bytes.size()};
    if (s == tls_status::failed) return {s, 0};
    out_.assign(sealed.begin() + static_cast<std::ptrdiff_t>(sent), sealed.end());
    sealed_write_ = true;
    return {s, 0};
  }
  if (!sealed_write_) {
    records_->seal(tls_content::application_data, bytes, out_);
    sealed_write_ = true;
  }
  const tls_status s = flush(error);
  if (s != tls_status::done) return {s, 0};
  sealed_write_ = false;
  return {tls_status::done, bytes.size()};
}

tls_status tls_channel::flush(std::string& error) {
  std::size_t sent = 0;
  const tls_status status = send_from(out_, sent, error);
  out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(sent));
  return status;
}

tls_status tls_channel::send_from(std::span<const std::uint8_t> bytes, std::size_t& sent,
                                  std::string& error) {
  tls_status status = tls_status::done;
  while (sent < bytes.size()) {
    // MSG_NOSIGNAL: a device gone mid-write is an EPIPE here, never a SIGPIPE.
    const ssize_t n = ::send(socket_.fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        status = tls_status::want_write;
      } else {
        error = std::strerror(errno);
        status = tls_status::failed;
      }
      break;
    }
    sent += static_cast<std::size_t>(n);
  }
  return status;
}

}  // namespace tgw::infra::net
