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

constexpr std::uint8_t handshake_new_session_ticket = 4;
constexpr std::uint8_t handshake_key_update = 24;
constexpr std::uint8_t alert_close_notify = 0;
constexpr std::uint8_t alert_level_warning = 1;

}  // namespace

tls_result tls_channel::records_read(std::span<std::uint8_t> into, std::string& error) {
  socket_.drained = false;
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
    const std::size_t have = kept + static_cast<std::size_t>(n);
    std::size_t plain = 0;
    std::size_t used = 0;
    if (!open_records(buffer.first(have), plain, used, error)) return {tls_status::failed, 0};
    partial_.assign(buffer.begin() + static_cast<std::ptrdiff_t>(used),
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

bool tls_channel::open_records(std::span<std::uint8_t> buffer, std::size_t& plain,
                               std::size_t& used, std::string& error) {
  plain = used = 0;
  while (!peer_closed_ && buffer.size() - used >= tls_records::header_size) {
    const std::uint8_t* header = buffer.data() + used;
    const std::size_t body = (std::size_t{header[3]} << 8) | header[4];
    if (body > tls_records::max_body) {
      error = "record overflow (" + std::to_string(body) + " bytes)";
      return false;
    }
    if (buffer.size() - used < tls_records::header_size + body) break;
    const tls_opened r = records_->open(buffer.subspan(used, tls_records::header_size + body));
    used += tls_records::header_size + body;
    if (!r.ok) {
      error = r.error;
      return false;
    }
    switch (r.type) {
      case tls_content::application_data:
        // Moved down over the headers and tags of the records before it.
        std::memmove(buffer.data() + plain, r.plaintext.data(), r.plaintext.size());
        plain += r.plaintext.size();
        break;
      case tls_content::alert:
        if (r.plaintext.size() != 2) {
          error = "malformed alert";
          return false;
        }
        if (r.plaintext[1] == alert_close_notify) {
          peer_closed_ = true;
        } else if (!(r.plaintext[0] == alert_level_warning &&
                     records_->version() == tls_version::tls12)) {
          error = "alert " + std::to_string(r.plaintext[1]) + " from the peer";
          return false;
        }
        break;
      case tls_content::handshake:
        if (!post_handshake(r.plaintext, error)) return false;
        break;
      default:
        error = "unexpected record type " + std::to_string(static_cast<int>(r.type));
        return false;
    }
  }
  return true;
}

// Messages after the handshake. TLS 1.2: any is a renegotiation, refused. TLS 1.3:
// KeyUpdate moves the keys on (and, when asked, ours too); a client ignores session
// tickets (the simulator does not resume). A message split over records is refused:
// the stacks seen send each of these whole.
bool tls_channel::post_handshake(std::span<const std::uint8_t> messages, std::string& error) {
  if (records_->version() == tls_version::tls12) {
    error = server_ ? "renegotiation refused" : "unexpected handshake message";
    return false;
  }
  while (!messages.empty()) {
    if (messages.size() < 4) {
      error = "handshake message split over records";
      return false;
    }
    const std::size_t length =
        (std::size_t{messages[1]} << 16) | (std::size_t{messages[2]} << 8) | messages[3];
    if (messages.size() < 4 + length) {
      error = "handshake message split over records";
      return false;
    }
    const std::uint8_t type = messages[0];
    const auto body = messages.subspan(4, length);
    messages = messages.subspan(4 + length);
    if (type == handshake_new_session_ticket && !server_) continue;
    if (type != handshake_key_update || body.size() != 1 || body[0] > 1) {
      error = "unexpected handshake message " + std::to_string(type) + " after the handshake";
      return false;
    }
    if (!records_->update_read_keys()) {
      error = "key update failed";
      return false;
    }
    if (body[0] == 1) {
      // update_requested: answer under the old keys, then move ours on.
      static constexpr std::uint8_t not_requested[] = {handshake_key_update, 0, 0, 1, 0};
      records_->seal(tls_content::handshake, not_requested, out_);
      if (!records_->update_write_keys()) {
        error = "key update failed";
        return false;
      }
      if (flush(error) == tls_status::failed) return false;
    }
  }
  return true;
}

// Seals the caller's bytes once; a write the socket did not take whole is repeated
// by the caller with the same bytes, and only what is left is sent then.
tls_result tls_channel::records_write(std::span<const std::uint8_t> bytes, std::string& error) {
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
  tls_status status = tls_status::done;
  while (sent < out_.size()) {
    // MSG_NOSIGNAL: a device gone mid-write is an EPIPE here, never a SIGPIPE.
    const ssize_t n = ::send(socket_.fd, out_.data() + sent, out_.size() - sent, MSG_NOSIGNAL);
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
  out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(sent));
  return status;
}

}  // namespace tgw::infra::net
