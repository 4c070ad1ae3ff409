// What a TLS session costs the gateway in memory, and what each of the measures that
// keep it down saves: the gateway's own server context and tls_channel over socket
// pairs, the clients (plain OpenSSL) in a child process so that only the server side
// is counted. Heap in use (glibc's mallinfo2, this program has no jemalloc) before and
// after N sessions, per session, for each variant. docs/PERFORMANCE.md has the figures.
//
// Usage: tls_session_memory_bench [SESSIONS] [--sites]   (default 2000)
//
// --sites: where the memory of an idle session goes, by OpenSSL source line. OpenSSL
// hands every allocation's file and line to the allocator it is given; the bench's
// allocator (which clears freed blocks as the gateway's does) notes them, and after the
// sessions go idle the blocks still held are summed per line, per session.

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "infra/net/tls_channel.hpp"
#include "infra/net/tls_context.hpp"
#include "tests/support/tls_device.hpp"

namespace {

using tgw::infra::net::tls_channel;
using tgw::infra::net::tls_result;
using tgw::infra::net::tls_server_context;
using tgw::infra::net::tls_status;

// Where a session is left when it is counted.
enum class stage { handshaking, idle, mid_record };

struct variant {
  const char* name;
  int version;
  stage at = stage::idle;
  bool free_buffers_when_idle = true;  ///< tls_channel::release_buffers() before waiting.
  std::function<void(SSL_CTX*)> tweak = [](SSL_CTX*) {};
  bool client_takes_tickets = true;  ///< Off: SSL_OP_NO_TICKET, as some embedded stacks.
};

void require(bool ok) {
  if (!ok) {
    std::fprintf(stderr, "OpenSSL refused a setting\n");
    std::exit(1);
  }
}

// --- allocation sites ------------------------------------------------------------------

struct allocation {
  const char* file;
  int line;
  std::size_t size;
  std::uint64_t serial;
};

bool tracking = false;
std::uint64_t next_serial = 0;
std::unordered_map<void*, allocation>& live_blocks() {
  static auto* blocks = new std::unordered_map<void*, allocation>();
  return *blocks;
}

void note(void* p, std::size_t n, const char* file, int line) {
  if (tracking && p != nullptr) live_blocks()[p] = {file, line, n, next_serial++};
}

void* site_malloc(std::size_t n, const char* file, int line) {
  void* p = std::malloc(n);
  note(p, n, file, line);
  return p;
}

void site_free(void* p, const char*, int) {
  if (p == nullptr) return;
  live_blocks().erase(p);
  explicit_bzero(p, malloc_usable_size(p));
  std::free(p);
}

void* site_realloc(void* p, std::size_t n, const char* file, int line) {
  if (p == nullptr) return site_malloc(n, file, line);
  if (n == 0) {
    site_free(p, file, line);
    return nullptr;
  }
  void* moved = site_malloc(n, file, line);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, p, std::min(n, malloc_usable_size(p)));
  site_free(p, file, line);
  return moved;
}

// The blocks made since `serial` and still held, summed by source line, per session.
std::string site_report(std::uint64_t serial, int sessions) {
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_site;  // blocks, bytes
  std::size_t total = 0;
  for (const auto& [p, a] : live_blocks()) {
    if (a.serial < serial) continue;
    const char* base = std::strrchr(a.file, '/');
    auto& s = by_site[std::string(base != nullptr ? base + 1 : a.file) + ":" +
                      std::to_string(a.line) + " (" + std::to_string(a.size) + " B)"];
    ++s.first;
    s.second += malloc_usable_size(p);
    total += malloc_usable_size(p);
  }
  std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>> rows(by_site.begin(),
                                                                                by_site.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  char line[512];
  std::snprintf(line, sizeof line, "    OpenSSL blocks held a session: %.0f bytes (usable sizes)\n",
                static_cast<double>(total) / sessions);
  std::string out = line;
  for (const auto& [site, s] : rows) {
    const double blocks = static_cast<double>(s.first) / sessions;
    if (blocks < 0.05) continue;
    std::snprintf(line, sizeof line, "    %8.0f B  %5.2f blocks  %s\n",
                  static_cast<double>(s.second) / sessions, blocks, site.c_str());
    out += line;
  }
  return out;
}

bool show_sites = false;

std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

void wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  ::poll(&p, 1, 1000);
}

// The client side, in the child: one session per pair, in order, each sending a
// 1-record packet (100 bytes) and reading its 4-byte ACK; a half record for
// mid_record; then it waits for the parent to finish counting.
[[noreturn]] void run_clients(const std::vector<int>& fds, const variant& v, int done_pipe) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, v.version);
  SSL_CTX_set_max_proto_version(ctx, v.version);
  if (!v.client_takes_tickets) SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  std::vector<SSL*> sessions;
  const std::vector<std::uint8_t> packet(100, 0x42);
  for (const int fd : fds) {
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) std::_Exit(3);
    sessions.push_back(ssl);
    if (v.at == stage::handshaking) continue;
    if (v.at == stage::mid_record) {
      // A record's first half: the server holds its read buffer until the rest.
      BIO* mem = BIO_new(BIO_s_mem());
      SSL_set0_wbio(ssl, mem);
      if (SSL_write(ssl, packet.data(), static_cast<int>(packet.size())) <= 0) std::_Exit(4);
      char* data = nullptr;
      const long n = BIO_get_mem_data(mem, &data);
      if (::write(fd, data, static_cast<std::size_t>(n / 2)) != n / 2) std::_Exit(5);
      continue;
    }
    std::uint8_t ack[4];
    if (SSL_write(ssl, packet.data(), static_cast<int>(packet.size())) <= 0 ||
        SSL_read(ssl, ack, 4) != 4)
      std::_Exit(6);
  }
  char c = 0;
  (void)::read(done_pipe, &c, 1);
  std::_Exit(0);
}

// The server side of one session, driven as the gateway drives it: the handshake,
// then the packet read and the ACK written, buffers given back while it waits.
bool serve(tls_channel& server, int fd, const variant& v) {
  std::string error;
  if (v.at == stage::handshaking) {
    // The ClientHello in, the first flight out; the client's Finished is left unread.
    wait_readable(fd);
    return server.handshake(error).status == tls_status::want_read;
  }
  tls_result r;
  for (int i = 0; i < 100 && (r = server.handshake(error)).status != tls_status::done; ++i) {
    if (r.status != tls_status::want_read && r.status != tls_status::want_write) return false;
    wait_readable(fd);
  }
  std::vector<std::uint8_t> space(1000);
  if (v.at == stage::mid_record) {
    wait_readable(fd);
    return server.read(space, error).status == tls_status::want_read;
  }
  std::size_t got = 0;
  for (int i = 0; i < 100 && got < 100; ++i) {
    r = server.read(space, error);
    if (r.status == tls_status::done)
      got += r.bytes;
    else if (r.status == tls_status::want_read)
      wait_readable(fd);
    else
      return false;
  }
  // The read after a packet, which finds the socket empty, as the gateway's does:
  // OpenSSL sets its read buffer up before it and keeps it.
  if (got != 100 || server.read(space, error).status != tls_status::want_read) return false;
  const std::vector<std::uint8_t> ack = {0, 0, 0, 1};
  if (server.write(ack, error).status != tls_status::done) return false;
  if (v.free_buffers_when_idle) server.release_buffers();
  return true;
}

void measure(const variant& v, int sessions, const std::string& cert, const std::string& key) {
  tgw::infra::net::tls_settings settings;
  settings.cert_file = cert;
  settings.key_file = key;
  std::string error;
  auto context = tls_server_context::load(settings, error);
  if (!context) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::exit(1);
  }
  v.tweak(context->native());
  std::vector<int> server_fds;
  std::vector<int> client_fds;
  for (int i = 0; i < sessions; ++i) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) std::exit(1);
    server_fds.push_back(fds[0]);
    client_fds.push_back(fds[1]);
  }
  int done[2];
  if (::pipe(done) != 0) std::exit(1);
  const pid_t child = ::fork();
  if (child == 0) {
    for (const int fd : server_fds) ::close(fd);
    run_clients(client_fds, v, done[0]);
  }
  for (const int fd : client_fds) ::close(fd);
  for (const int fd : server_fds) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  malloc_trim(0);
  const std::size_t before = heap_in_use();
  const std::uint64_t serial = next_serial;
  std::vector<std::unique_ptr<tls_channel>> servers;
  int failed = 0;
  for (const int fd : server_fds) {
    servers.push_back(std::make_unique<tls_channel>(*context, fd));
    if (!serve(*servers.back(), fd, v)) ++failed;
  }
  const std::size_t after = heap_in_use();
  const bool print =
      show_sites && (v.at == stage::idle && v.free_buffers_when_idle &&
                     std::string(v.name).find("as the gateway runs it") != std::string::npos);
  const std::string sites = print ? site_report(serial, sessions) : std::string();
  (void)::write(done[1], "x", 1);
  ::waitpid(child, nullptr, 0);
  // Closed as the gateway closes them, with close_notify: OpenSSL drops a session that
  // ended otherwise from its cache.
  for (auto& server : servers) (void)server->shutdown(error);
  servers.clear();
  // What outlives the sessions: a server session cache keeps them.
  const std::size_t closed = heap_in_use();
  const auto kib = [&](std::size_t bytes) {
    return static_cast<double>(bytes) / sessions / 1024.0;
  };
  std::printf("%-50s %6d sessions%s: %6.2f KiB of heap each, %5.2f KiB each left once closed\n",
              v.name, sessions, failed > 0 ? " (SOME FAILED)" : "", kib(after - before),
              kib(closed > before ? closed - before : 0));
  std::fputs(sites.c_str(), stdout);
  std::fflush(stdout);
  for (const int fd : server_fds) ::close(fd);
  ::close(done[0]);
  ::close(done[1]);
}

}  // namespace

int main(int argc, char** argv) {
  int sessions = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sites") == 0)
      show_sites = true;
    else
      sessions = std::atoi(argv[i]);
  }
  if (show_sites) {
    // Before OpenSSL allocates anything: only then may its allocator be set.
    if (CRYPTO_set_mem_functions(site_malloc, site_realloc, site_free) != 1) {
      std::fprintf(stderr, "OpenSSL's allocator could not be set\n");
      return 1;
    }
    tracking = true;
  }
  const std::string dir = std::filesystem::temp_directory_path() / "tgw-tls-memory-bench";
  std::filesystem::create_directories(dir);
  const auto ca = tgw::test::make_ca(dir, "bench-ca");
  const auto cert = tgw::test::make_signed(dir, "bench-gateway", ca, 2);
  const std::vector<variant> variants = {
      {"TLS 1.3, idle, as the gateway runs it", TLS1_3_VERSION},
      {"TLS 1.2, idle, as the gateway runs it", TLS1_2_VERSION},
      {"TLS 1.3, idle, buffers kept (no free_buffers)", TLS1_3_VERSION, stage::idle, false},
      {"TLS 1.3, idle, no SSL_MODE_RELEASE_BUFFERS", TLS1_3_VERSION, stage::idle, false,
       [](SSL_CTX* c) { SSL_CTX_clear_mode(c, SSL_MODE_RELEASE_BUFFERS); }},
      {"TLS 1.3, idle, server session cache on", TLS1_3_VERSION, stage::idle, true,
       [](SSL_CTX* c) { SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER); }},
      {"TLS 1.2, idle, server session cache on", TLS1_2_VERSION, stage::idle, true,
       [](SSL_CTX* c) { SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER); }},
      {"TLS 1.2, idle, cache on, clients without tickets", TLS1_2_VERSION, stage::idle, true,
       [](SSL_CTX* c) { SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER); }, false},
      {"TLS 1.2, idle, cache off, clients without tickets", TLS1_2_VERSION, stage::idle, true,
       [](SSL_CTX*) {}, false},
      {"TLS 1.3, idle, 2 tickets (OpenSSL's default)", TLS1_3_VERSION, stage::idle, true,
       [](SSL_CTX* c) { require(SSL_CTX_set_num_tickets(c, 2) == 1); }},
      {"TLS 1.3, idle, no tickets", TLS1_3_VERSION, stage::idle, true,
       [](SSL_CTX* c) { require(SSL_CTX_set_num_tickets(c, 0) == 1); }},
      {"TLS 1.3, busy: half a record read", TLS1_3_VERSION, stage::mid_record},
      {"TLS 1.3, handshake under way (first flight out)", TLS1_3_VERSION, stage::handshaking},
  };
  for (const variant& v : variants) measure(v, sessions, cert.cert, cert.key);
  std::filesystem::remove_all(dir);
  return 0;
}
