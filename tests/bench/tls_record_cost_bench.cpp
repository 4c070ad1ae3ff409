// What a 1-record packet costs the gateway's side of a TLS session in CPU, by cipher
// suite, beside the same exchange in plain TCP: the server reads a 100-byte packet, makes
// the read that finds the socket empty, writes a 4-byte ACK and gives its buffers back,
// as the gateway's connection does, through the gateway's own server context and
// tls_channel on a socket pair. The client (plain OpenSSL) runs in a child process, so
// the CPU counted (the parent's, CLOCK_PROCESS_CPUTIME_ID) is the server's alone: the
// gateway's share of TLS, apart from the simulator's. The handshake is not counted.
// docs/PERFORMANCE.md has the figures.
//
// Usage: tls_record_cost_bench [PACKETS] [ROUNDS]   (defaults 20000 and 3)

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "infra/net/tls_channel.hpp"
#include "infra/net/tls_context.hpp"
#include "infra/net/tls_memory.hpp"
#include "tests/support/tls_device.hpp"

namespace {

using tgw::infra::net::tls_channel;
using tgw::infra::net::tls_result;
using tgw::infra::net::tls_server_context;
using tgw::infra::net::tls_status;

constexpr std::size_t packet_size = 100;  // a 1-record Codec 8E packet, about
constexpr std::size_t ack_size = 4;

struct variant {
  const char* name;
  int version = 0;              ///< 0: plain TCP.
  const char* suite = "";       ///< TLS 1.3 ciphersuite or TLS 1.2 cipher list the client offers.
  bool release_buffers = true;  ///< As the gateway: buffers given back after each ACK.
};

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

void wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  ::poll(&p, 1, 5000);
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "tls_record_cost_bench: %s\n", what);
  std::exit(1);
}

// The device: sends a packet, waits for its ACK, packets times.
[[noreturn]] void run_client(int fd, const variant& v, int packets) {
  const std::vector<unsigned char> packet(packet_size, 0x42);
  unsigned char ack[ack_size];
  if (v.version == 0) {
    for (int i = 0; i < packets; ++i) {
      if (::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL) !=
              static_cast<ssize_t>(packet.size()) ||
          ::recv(fd, ack, sizeof ack, MSG_WAITALL) != static_cast<ssize_t>(sizeof ack))
        std::_Exit(2);
    }
    std::_Exit(0);
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, v.version);
  SSL_CTX_set_max_proto_version(ctx, v.version);
  if ((v.version == TLS1_3_VERSION ? SSL_CTX_set_ciphersuites(ctx, v.suite)
                                   : SSL_CTX_set_cipher_list(ctx, v.suite)) != 1)
    std::_Exit(3);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) != 1) std::_Exit(4);
  for (int i = 0; i < packets; ++i) {
    if (SSL_write(ssl, packet.data(), static_cast<int>(packet.size())) <= 0) std::_Exit(5);
    std::size_t got = 0;
    while (got < ack_size) {
      const int n = SSL_read(ssl, ack + got, static_cast<int>(ack_size - got));
      if (n <= 0) std::_Exit(6);
      got += static_cast<std::size_t>(n);
    }
  }
  std::_Exit(0);
}

// The gateway's side of one packet in plain TCP: the recv that takes it, the one that
// finds the socket empty, the ACK.
bool serve_plain(int fd) {
  unsigned char space[2048];
  std::size_t got = 0;
  while (got < packet_size) {
    const ssize_t n = ::recv(fd, space, sizeof space, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      wait_readable(fd);
    } else {
      return false;
    }
  }
  if (::recv(fd, space, sizeof space, 0) != -1) return false;
  const unsigned char ack[ack_size] = {0, 0, 0, 1};
  return ::send(fd, ack, sizeof ack, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof ack);
}

bool serve_tls(tls_channel& server, int fd, const variant& v) {
  std::vector<std::uint8_t> space(2048);
  std::string error;
  std::size_t got = 0;
  while (got < packet_size) {
    const tls_result r = server.read(space, error);
    if (r.status == tls_status::done) {
      got += r.bytes;
    } else if (r.status == tls_status::want_read) {
      if (server.socket_drained()) wait_readable(fd);
    } else {
      return false;
    }
  }
  if (server.read(space, error).status != tls_status::want_read) return false;
  const std::vector<std::uint8_t> ack = {0, 0, 0, 1};
  if (server.write(ack, error).status != tls_status::done) return false;
  if (v.release_buffers) server.release_buffers();
  return true;
}

// Server CPU microseconds a packet, or a negative number when the run failed.
double measure(const variant& v, int packets, const tls_server_context& context) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) fail("socketpair");
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    run_client(fds[1], v, packets);
  }
  ::close(fds[1]);
  const int fd = fds[0];
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  double spent = -1;
  if (v.version == 0) {
    const double start = cpu_seconds();
    bool ok = true;
    for (int i = 0; i < packets && ok; ++i) ok = serve_plain(fd);
    if (ok) spent = cpu_seconds() - start;
  } else {
    tls_channel server(context, fd);
    std::string error;
    tls_result r;
    for (int i = 0; i < 1000 && (r = server.handshake(error)).status != tls_status::done; ++i) {
      if (r.status != tls_status::want_read && r.status != tls_status::want_write) break;
      wait_readable(fd);
    }
    if (r.status == tls_status::done) {
      const double start = cpu_seconds();
      bool ok = true;
      for (int i = 0; i < packets && ok; ++i) ok = serve_tls(server, fd, v);
      if (ok) spent = cpu_seconds() - start;
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fd);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return spent < 0 ? -1 : spent * 1e6 / packets;
}

}  // namespace

int main(int argc, char** argv) {
  // As the gateway: OpenSSL's allocator clears what it frees, which every packet's
  // buffers pass through.
  tgw::infra::net::guard_tls_memory();
  const int packets = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  if (packets < 1 || rounds < 1) fail("PACKETS and ROUNDS take a number above 0");
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("tgw-tls-record-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto ca = tgw::test::make_ca(dir, "bench-ca");
  const auto cert = tgw::test::make_signed(dir, "bench-gateway", ca, 2);
  tgw::infra::net::tls_settings settings;
  settings.cert_file = cert.cert;
  settings.key_file = cert.key;
  std::string error;
  const auto context = tls_server_context::load(settings, error);
  if (!context) fail(error.c_str());
  const std::vector<variant> variants = {
      {"plain TCP"},
      {"TLS 1.3 TLS_AES_128_GCM_SHA256", TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256"},
      {"TLS 1.3 TLS_CHACHA20_POLY1305_SHA256", TLS1_3_VERSION, "TLS_CHACHA20_POLY1305_SHA256"},
      {"TLS 1.2 ECDHE-ECDSA-AES128-GCM-SHA256", TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"},
      {"TLS 1.2 ECDHE-ECDSA-CHACHA20-POLY1305", TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"},
      {"TLS 1.2 ECDHE-ECDSA-AES128-SHA (CBC)", TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"},
      {"TLS 1.2 AES128-GCM, buffers kept", TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256", false},
  };
  std::printf(
      "server CPU a 1-record packet (100 B in, 4 B ACK out), %d packets, %d rounds "
      "alternating; µs\n",
      packets, rounds);
  std::vector<std::vector<double>> results(variants.size());
  bool all_ran = true;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < variants.size(); ++i)
      results[i].push_back(measure(variants[i], packets, *context));
  for (std::size_t i = 0; i < variants.size(); ++i) {
    std::vector<double> v = results[i];
    std::sort(v.begin(), v.end());
    std::printf("%-42s median %6.2f  (", variants[i].name, v[v.size() / 2]);
    for (std::size_t k = 0; k < results[i].size(); ++k)
      std::printf(k == 0 ? "%.2f" : ", %.2f", results[i][k]);
    std::printf(")%s\n", v.front() < 0 ? "  FAILED" : "");
    all_ran = all_ran && v.front() >= 0;
  }
  std::filesystem::remove_all(dir);
  return all_ran ? 0 : 1;
}
