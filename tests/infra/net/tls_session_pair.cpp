#include "tests/infra/net/tls_session_pair.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <openssl/err.h>

#include <stdexcept>

namespace tgw::infra::net::tls_test {

std::vector<std::uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

// Built by push_back: GCC 12 at -O3 takes the indexed form, inlined, for a write past
// the end (-Wstringop-overflow).
std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(i * 31 + 7));
  return out;
}

void wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  ::poll(&p, 1, 20);
}

// The certificate files, made once for the whole binary.
const test::pem_files& server_certificate() {
  static const test::pem_files files = [] {
    const std::string dir = ::testing::TempDir();
    const test::pem_files ca = test::make_ca(dir, "tls-channel-ca");
    return test::make_signed(dir, "tls-channel-server", ca, 2);
  }();
  return files;
}

session_pair::session_pair(const peer_choice& choice) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) throw std::runtime_error("socketpair");
  server_fd_ = fds[0];
  client_fd_ = fds[1];
  ::fcntl(server_fd_, F_SETFL, O_NONBLOCK);
  ::fcntl(client_fd_, F_SETFL, O_NONBLOCK);
  tls_settings settings;
  settings.cert_file = server_certificate().cert;
  settings.key_file = server_certificate().key;
  std::string error;
  context_ = tls_server_context::load(settings, error);
  if (!context_) throw std::runtime_error(error);
  server_ = std::make_unique<tls_channel>(*context_, server_fd_);

  client_ctx_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(client_ctx_, choice.version);
  SSL_CTX_set_max_proto_version(client_ctx_, choice.version);
  if (!choice.cipher.empty()) {
    if (choice.version == TLS1_3_VERSION)
      SSL_CTX_set_ciphersuites(client_ctx_, choice.cipher.c_str());
    else
      SSL_CTX_set_cipher_list(client_ctx_, choice.cipher.c_str());
  }
  client_ = SSL_new(client_ctx_);
  SSL_set_fd(client_, client_fd_);
  SSL_set_connect_state(client_);
}

session_pair::~session_pair() {
  server_.reset();
  SSL_free(client_);
  SSL_CTX_free(client_ctx_);
  ::close(server_fd_);
  if (client_fd_ >= 0) ::close(client_fd_);
}

bool session_pair::handshake() {
  bool server_done = false;
  bool client_done = false;
  for (int round = 0; round < patience && !(server_done && client_done); ++round) {
    if (!server_done) {
      std::string error;
      const tls_result r = server_->handshake(error);
      if (r.status == tls_status::done) server_done = true;
      if (r.status == tls_status::failed || r.status == tls_status::closed) return false;
    }
    if (!client_done) {
      ERR_clear_error();
      const int r = SSL_do_handshake(client_);
      if (r == 1) {
        client_done = true;
      } else {
        const int e = SSL_get_error(client_, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return false;
      }
    }
    if (!(server_done && client_done)) wait_readable(round % 2 == 0 ? server_fd_ : client_fd_);
  }
  return server_done && client_done;
}

void session_pair::client_send(const std::vector<std::uint8_t>& b) {
  std::size_t done = 0;
  for (int i = 0; i < patience && done < b.size(); ++i) {
    const int r = SSL_write(client_, b.data() + done, static_cast<int>(b.size() - done));
    if (r > 0) {
      done += static_cast<std::size_t>(r);
      continue;
    }
    // The pair's buffer is full: let the server read some.
    drain_server_into(pending_);
  }
}

std::vector<std::uint8_t> session_pair::server_receive(std::size_t n, tls_status* last,
                                                       std::string* error) {
  std::vector<std::uint8_t> out = std::move(pending_);
  pending_.clear();
  tls_status status = tls_status::done;
  std::string why;
  for (int waits = 0; waits < patience && out.size() < n;) {
    std::vector<std::uint8_t> space(1000);
    const tls_result r = server_->read(space, why);
    status = r.status;
    if (r.status == tls_status::done) {
      out.insert(out.end(), space.begin(), space.begin() + static_cast<std::ptrdiff_t>(r.bytes));
    } else if (r.status == tls_status::want_read) {
      server_->release_buffers();
      wait_readable(server_fd_);
      ++waits;
    } else {
      break;
    }
  }
  if (last != nullptr) *last = status;
  if (error != nullptr) *error = why;
  return out;
}

void session_pair::server_send(const std::vector<std::uint8_t>& b) {
  for (int i = 0; i < patience; ++i) {
    std::string error;
    const tls_result r = server_->write(b, error);
    if (r.status == tls_status::done) {
      ASSERT_EQ(r.bytes, b.size());
      return;
    }
    ASSERT_EQ(r.status, tls_status::want_write) << error;
    drain_client_into(client_pending_);
  }
  FAIL() << "server write never finished";
}

std::vector<std::uint8_t> session_pair::client_receive(std::size_t n) {
  std::vector<std::uint8_t> out = std::move(client_pending_);
  client_pending_.clear();
  for (int i = 0; i < patience && out.size() < n; ++i) {
    std::uint8_t buf[4096];
    const int r = SSL_read(client_, buf, sizeof buf);
    if (r > 0) {
      out.insert(out.end(), buf, buf + r);
      continue;
    }
    const int e = SSL_get_error(client_, r);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) break;
    wait_readable(client_fd_);
  }
  return out;
}

int session_pair::client_read_error() {
  for (int i = 0; i < patience; ++i) {
    std::uint8_t b = 0;
    const int r = SSL_read(client_, &b, 1);
    const int e = SSL_get_error(client_, r);
    if (e != SSL_ERROR_WANT_READ) return e;
    wait_readable(client_fd_);
  }
  return SSL_ERROR_WANT_READ;
}

void session_pair::raw_to_server(std::span<const std::uint8_t> b) {
  ASSERT_EQ(::send(client_fd_, b.data(), b.size(), MSG_NOSIGNAL), static_cast<ssize_t>(b.size()));
}

BIO* session_pair::capture_client_records() {
  BIO* mem = BIO_new(BIO_s_mem());
  SSL_set0_wbio(client_, mem);
  return mem;
}

void session_pair::close_client_socket() {
  ::close(client_fd_);
  client_fd_ = -1;
}

void session_pair::drain_server_into(std::vector<std::uint8_t>& into) {
  std::vector<std::uint8_t> space(1000);
  std::string error;
  const tls_result r = server_->read(space, error);
  if (r.status == tls_status::done)
    into.insert(into.end(), space.begin(), space.begin() + static_cast<std::ptrdiff_t>(r.bytes));
  else
    wait_readable(server_fd_);
}

void session_pair::drain_client_into(std::vector<std::uint8_t>& into) {
  std::uint8_t buf[4096];
  const int r = SSL_read(client_, buf, sizeof buf);
  if (r > 0)
    into.insert(into.end(), buf, buf + r);
  else
    wait_readable(client_fd_);
}

std::vector<std::uint8_t> mem_bytes(BIO* mem) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(mem, &data);
  return {data, data + n};
}

// The records the client seals for `messages`, one SSL_write each, caught before
// they reach the socket.
std::vector<std::uint8_t> client_records(
    session_pair& pair, std::initializer_list<std::vector<std::uint8_t>> messages) {
  BIO* records = pair.capture_client_records();
  for (const auto& m : messages) {
    if (SSL_write(pair.client(), m.data(), static_cast<int>(m.size())) !=
        static_cast<int>(m.size()))
      throw std::runtime_error("SSL_write");
  }
  return mem_bytes(records);
}

// One server read; its bytes are appended to `got`. False on anything but bytes or
// a wait for more.
bool read_into(tls_channel& server, std::vector<std::uint8_t>& got, std::string& error) {
  std::vector<std::uint8_t> space(1000);
  const tls_result r = server.read(space, error);
  if (r.status == tls_status::done)
    got.insert(got.end(), space.begin(), space.begin() + static_cast<std::ptrdiff_t>(r.bytes));
  return r.status == tls_status::done || r.status == tls_status::want_read;
}

std::vector<std::uint8_t> joined(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace tgw::infra::net::tls_test
