#include "infra/redis/socket_stream.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "infra/redis/link_errors.hpp"
#include "infra/redis/tls_client_context.hpp"

namespace tgw::infra::redis {
namespace {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string ms_text(milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

// strerror's words ("Connection refused"), without its shared buffer.
std::string system_text(int err) {
  return std::generic_category().message(err);
}

// A BIO over the socket that writes with MSG_NOSIGNAL: a server gone mid-write is an
// EPIPE for this link, never a SIGPIPE that ends a client subcommand.
int bio_read(BIO* bio, char* out, int size) {
  BIO_clear_retry_flags(bio);
  const int fd = *static_cast<const int*>(BIO_get_data(bio));
  const ssize_t n = ::recv(fd, out, static_cast<std::size_t>(size), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

int bio_write(BIO* bio, const char* in, int size) {
  BIO_clear_retry_flags(bio);
  const int fd = *static_cast<const int*>(BIO_get_data(bio));
  const ssize_t n = ::send(fd, in, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

long bio_ctrl(BIO*, int command, long, void*) {
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tgw redis socket");
    if (m == nullptr) return m;
    if (BIO_meth_set_read(m, bio_read) != 1 || BIO_meth_set_write(m, bio_write) != 1 ||
        BIO_meth_set_ctrl(m, bio_ctrl) != 1 || BIO_meth_set_create(m, bio_create) != 1) {
      BIO_meth_free(m);
      return static_cast<BIO_METHOD*>(nullptr);
    }
    return m;
  }();
  return method;
}

bool is_ip_address(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

void tune_tcp(int fd) {
  const int on = 1;
  // Replies are small and pipelined: waiting for a full segment only adds latency.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  // As hiredis' redisEnableKeepAlive: a server that vanished without closing is found.
  const int idle = 15;
  const int interval = 5;
  const int count = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

// Waits for a non-blocking connect; 0, or the errno it ended with (ETIMEDOUT at the
// deadline).
int finish_connect(int fd, clock::time_point deadline) {
  pollfd p{fd, POLLOUT, 0};
  while (true) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now()).count();
    if (left <= 0) return ETIMEDOUT;
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    return err;
  }
}

// Connects one socket of `family` to `address`; the fd, or -1 with `err` set.
int connect_one(int family, const sockaddr* address, socklen_t length, clock::time_point deadline,
                int& err) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    err = errno;
    return -1;
  }
  err = 0;
  if (::connect(fd, address, length) != 0) {
    err = errno == EINPROGRESS || errno == EAGAIN ? finish_connect(fd, deadline) : errno;
    if (err != 0) {
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

std::string names_in(X509* cert) {
  std::string out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    std::string name;
    if (n->type == GEN_DNS) {
      name.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)),
                  static_cast<std::size_t>(ASN1_STRING_length(n->d.dNSName)));
    } else if (n->type == GEN_IPADD) {
      const int len = ASN1_STRING_length(n->d.iPAddress);
      char text[INET6_ADDRSTRLEN] = {};
      ::inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(n->d.iPAddress), text,
                  sizeof text);
      name = text;
    }
    if (!name.empty()) out += (out.empty() ? "" : ", ") + name;
  }
  GENERAL_NAMES_free(names);
  if (out.empty()) {
    char cn[256] = {};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0)
      out = std::string("CN ") + cn;
  }
  return out.empty() ? "no name" : out;
}

std::string not_after(X509* cert) {
  BIO* mem = BIO_new(BIO_s_mem());
  ASN1_TIME_print(mem, X509_get0_notAfter(cert));
  char* data = nullptr;
  const long len = BIO_get_mem_data(mem, &data);
  std::string out(data, static_cast<std::size_t>(len));
  BIO_free(mem);
  return out;
}

// OpenSSL keeps no peer certificate after a failed handshake: the one that failed is
// described here, while it is being verified, for the message.
struct refused_certificate {
  std::string names;
  std::string not_after;
};

int remember_refused(int ok, X509_STORE_CTX* store) {
  if (ok == 1) return ok;
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* seen = ssl != nullptr ? static_cast<refused_certificate*>(SSL_get_app_data(ssl)) : nullptr;
  X509* cert = X509_STORE_CTX_get0_cert(store);
  if (seen != nullptr && cert != nullptr) *seen = {names_in(cert), not_after(cert)};
  return ok;
}

// The server's certificate failed verification: why, in an operator's words.
std::string verify_failure(long result, const std::string& checked_name,
                           const refused_certificate& cert) {
  switch (result) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the server's " + std::string(link_errors::tls_expired) +
             (cert.not_after.empty() ? "" : " (not after " + cert.not_after + ")");
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's " + std::string(link_errors::tls_not_yet_valid);
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "the server's " + std::string(link_errors::tls_name_mismatch) + " " + checked_name +
             (cert.names.empty() ? "" : " (it names " + cert.names + ")");
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "the server's " + std::string(link_errors::tls_untrusted) + " (" +
             X509_verify_cert_error_string(result) + ")";
    default:
      return "the server's " + std::string(link_errors::tls_refused_certificate) + " (" +
             X509_verify_cert_error_string(result) + ")";
  }
}

}  // namespace

void socket_stream::close() noexcept {
  if (ssl_ != nullptr) {
    // A close_notify when the socket takes it at once; never a wait on a dead server.
    SSL_shutdown(ssl_);
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool socket_stream::connect(const endpoint& target, std::shared_ptr<const tls_client_context> tls,
                            std::string_view label, milliseconds timeout, std::string& error) {
  close();
  label_ = label;
  const auto deadline = clock::now() + timeout;
  int err = 0;
  if (!target.unix_socket.empty()) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (target.unix_socket.size() >= sizeof address.sun_path) {
      error = "connect to " + label_ + ": socket path too long";
      return false;
    }
    std::memcpy(address.sun_path, target.unix_socket.c_str(), target.unix_socket.size() + 1);
    fd_ = connect_one(AF_UNIX, reinterpret_cast<const sockaddr*>(&address), sizeof address,
                      deadline, err);
  } else {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(target.port);
    if (const int r = ::getaddrinfo(target.host.c_str(), port.c_str(), &hints, &found); r != 0) {
      error = "connect to " + label_ + ": cannot resolve '" + target.host + "': " + gai_strerror(r);
      return false;
    }
    for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next)
      fd_ = connect_one(a->ai_family, a->ai_addr, a->ai_addrlen, deadline, err);
    ::freeaddrinfo(found);
    if (fd_ >= 0) tune_tcp(fd_);
  }
  if (fd_ < 0) {
    if (err == ECONNREFUSED || err == ENOENT)
      error = "connect to " + label_ + ": " + std::string(link_errors::refused) +
              (err == ENOENT ? " (no such socket)" : " (nothing listens there)");
    else if (err == ETIMEDOUT)
      error = "connect to " + label_ + ": " + std::string(link_errors::connect_timeout) + " " +
              ms_text(timeout);
    else
      error = "connect to " + label_ + ": " + system_text(err);
    return false;
  }
  if (!tls) return true;
  const std::string& name =
      tls->options().server_name.empty() ? target.host : tls->options().server_name;
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now());
  return start_tls(std::move(tls), name, std::max(left, milliseconds{1}), error);
}

bool socket_stream::adopt(int fd, std::shared_ptr<const tls_client_context> tls,
                          std::string_view server_name, std::string_view label,
                          milliseconds timeout, std::string& error) {
  close();
  fd_ = fd;
  label_ = label;
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  return !tls || start_tls(std::move(tls), server_name, timeout, error);
}

bool socket_stream::start_tls(std::shared_ptr<const tls_client_context> tls,
                              std::string_view server_name, milliseconds timeout,
                              std::string& error) {
  const auto deadline = clock::now() + timeout;
  ERR_clear_error();
  ssl_ = SSL_new(tls->get());
  BIO* bio = socket_method() != nullptr ? BIO_new(socket_method()) : nullptr;
  if (ssl_ == nullptr || bio == nullptr) {
    BIO_free(bio);
    error = "TLS to " + label_ + ": cannot make a TLS session";
    close();
    return false;
  }
  // The BIO reads the stream's own fd_, which outlives the session (close() frees the
  // session first).
  BIO_set_data(bio, &fd_);
  SSL_set_bio(ssl_, bio, bio);
  tls_ = std::move(tls);
  const std::string name(server_name);
  const bool by_address = is_ip_address(name);
  // SNI carries host names only (RFC 6066); an address is checked against the
  // certificate's IP entries instead.
  if (!by_address && !name.empty()) SSL_set_tlsext_host_name(ssl_, name.c_str());
  if (!tls_->options().insecure && !name.empty()) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    if (by_address)
      X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    else
      SSL_set1_host(ssl_, name.c_str());
  }
  checked_name_ = name;
  refused_certificate refused;
  SSL_set_app_data(ssl_, &refused);
  if (!tls_->options().insecure) SSL_set_verify(ssl_, SSL_VERIFY_PEER, remember_refused);
  // `refused` lives until the handshake ends: a failure is described (tls_failure)
  // before close() frees the session, and a success forgets the pointer.
  while (true) {
    ERR_clear_error();
    const int r = SSL_connect(ssl_);
    if (r == 1) {
      SSL_set_app_data(ssl_, nullptr);
      return true;
    }
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now());
      if (left.count() > 0 && wait(e == SSL_ERROR_WANT_WRITE, left)) continue;
      error = "TLS to " + label_ + ": " + std::string(link_errors::tls_handshake_silent) + " " +
              ms_text(timeout);
      close();
      return false;
    }
    tls_failure(r, "handshake", error);
    close();
    return false;
  }
}

bool socket_stream::wait(bool for_write, milliseconds timeout) const {
  pollfd p{fd_, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
  const auto deadline = clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now()).count();
    const int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(left, 0)));
    if (r < 0 && errno == EINTR) continue;
    // An error or hang-up is "ready": the read or write that follows reports it.
    return r != 0;
  }
}

socket_stream::status socket_stream::tls_failure(int ret, std::string_view doing,
                                                 std::string& error) {
  const int e = SSL_get_error(ssl_, ret);
  const std::string prefix = "TLS to " + label_ + ": ";
  if (e == SSL_ERROR_ZERO_RETURN) {
    error = prefix + "the server closed the connection";
    return status::closed;
  }
  if (e == SSL_ERROR_SYSCALL) {
    const int saved = errno;
    ERR_clear_error();
    error = prefix + (saved == 0 ? std::string("the server closed the connection")
                                 : std::string(system_text(saved)));
    return status::closed;
  }
  if (const long verified = SSL_get_verify_result(ssl_);
      doing == "handshake" && verified != X509_V_OK) {
    ERR_clear_error();
    refused_certificate seen;
    if (auto* remembered = static_cast<refused_certificate*>(SSL_get_app_data(ssl_)))
      seen = *remembered;
    error = prefix + verify_failure(verified, checked_name_, seen);
    return status::failed;
  }
  const unsigned long code = ERR_peek_last_error();
  char text[256] = {};
  ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  const bool sent_certificate = !tls_->options().cert_file.empty();
  switch (ERR_GET_REASON(code)) {
    case SSL_R_UNEXPECTED_EOF_WHILE_READING:
      error = prefix + "the server closed the connection";
      return status::closed;
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_HTTP_REQUEST:
      error = prefix + "the server " + std::string(link_errors::tls_not_tls) + " (" + text + ")";
      return status::failed;
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      error = prefix + "the server " + std::string(link_errors::tls_client_certificate_required);
      return status::failed;
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
      error = prefix + "the server " +
              std::string(sent_certificate ? link_errors::tls_client_certificate_refused
                                           : link_errors::tls_client_certificate_required) +
              " (" + text + ")";
      return status::failed;
    case SSL_R_NO_RENEGOTIATION:
      error = prefix + "the server asked to renegotiate, which is refused (" + text + ")";
      return status::failed;
    default:
      error = prefix + std::string(doing) + " failed: " + text;
      return status::failed;
  }
}

socket_stream::status socket_stream::read_some(char* buffer, std::size_t capacity, std::size_t& got,
                                               milliseconds timeout, std::string& error) {
  got = 0;
  if (fd_ < 0) {
    error = "not connected";
    return status::failed;
  }
  const auto deadline = clock::now() + timeout;
  while (true) {
    bool for_write = false;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int r = SSL_read_ex(ssl_, buffer, capacity, &got);
      if (r == 1) return status::ok;
      const int e = SSL_get_error(ssl_, r);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
        return tls_failure(r, "read", error);
      for_write = e == SSL_ERROR_WANT_WRITE;
    } else {
      const ssize_t n = ::recv(fd_, buffer, capacity, 0);
      if (n > 0) {
        got = static_cast<std::size_t>(n);
        return status::ok;
      }
      if (n == 0) {
        error = "the server closed the connection";
        return status::closed;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        error = system_text(errno);
        return errno == ECONNRESET ? status::closed : status::failed;
      }
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now());
    if (left.count() <= 0 || !wait(for_write, left)) return status::timeout;
  }
}

socket_stream::status socket_stream::write_all(std::string_view bytes, milliseconds timeout,
                                               std::string& error) {
  if (fd_ < 0) {
    error = "not connected";
    return status::failed;
  }
  while (!bytes.empty()) {
    bool for_write = true;
    std::size_t done = 0;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int r = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &done);
      if (r != 1) {
        const int e = SSL_get_error(ssl_, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
          const status failed = tls_failure(r, "write", error);
          // The server may have said why before it closed (TLS 1.3 refuses a client
          // certificate after the handshake): its alert names the cause, the EPIPE not.
          char ignored[256];
          std::size_t got = 0;
          std::string alert;
          ERR_clear_error();
          const int rr = SSL_read_ex(ssl_, ignored, sizeof ignored, &got);
          if (rr != 1 && SSL_get_error(ssl_, rr) == SSL_ERROR_SSL &&
              tls_failure(rr, "read", alert) == status::failed)
            error = alert;
          return failed;
        }
        for_write = e == SSL_ERROR_WANT_WRITE;
      }
    } else {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n >= 0) {
        done = static_cast<std::size_t>(n);
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        error = system_text(errno);
        return errno == EPIPE || errno == ECONNRESET ? status::closed : status::failed;
      }
    }
    bytes.remove_prefix(done);
    if (done == 0 && !wait(for_write, timeout)) return status::timeout;
  }
  return status::ok;
}

}  // namespace tgw::infra::redis
