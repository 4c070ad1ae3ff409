// Many clients following the application API's /v1/events at once (scripts/bench-api
// runs it): N connections from one thread (poll), each de-chunked and cut into events,
// each record event's delay measured from the moment Redis stored it (the ms of its
// stream id) to the moment it was read here. Prints one JSON object: events and bytes
// per client, the delay's percentiles, and how many clients the server cut off.
// Usage: sse_clients_bench PORT TOKEN CLIENTS SECONDS [QUERY]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// One client: its socket, the HTTP head still to skip, the chunked body's state and
/// the text of the event being read.
struct client {
  int fd = -1;
  bool head_done = false;
  std::string pending;         ///< Raw bytes not yet taken apart.
  std::size_t chunk_left = 0;  ///< Data bytes of the current chunk still to come.
  bool in_chunk = false;
  std::string text;  ///< De-chunked, not yet cut into events.
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
  bool cut = false;
  bool closed = false;
};

void take_events(client& c, std::vector<std::int64_t>& delays) {
  std::size_t end;
  std::size_t from = 0;
  while ((end = c.text.find("\n\n", from)) != std::string::npos) {
    const std::string_view e(c.text.data() + from, end - from);
    from = end + 2;
    if (e.find("event: closing") != std::string_view::npos) c.cut = true;
    if (e.find("event: record") == std::string_view::npos) continue;
    ++c.events;
    // The record's stream id: `"id":"<ms>-<seq>"`, Redis' storing time.
    const auto at = e.find("\"id\":\"");
    if (at != std::string_view::npos) {
      const std::int64_t stored = std::atoll(std::string(e.substr(at + 6, 13)).c_str());
      if (stored > 0 && (c.events & 15U) == 0) delays.push_back(now_ms() - stored);
    }
  }
  c.text.erase(0, from);
}

void feed(client& c, const char* data, std::size_t n, std::vector<std::int64_t>& delays) {
  c.bytes += n;
  c.pending.append(data, n);
  if (!c.head_done) {
    const auto end = c.pending.find("\r\n\r\n");
    if (end == std::string::npos) return;
    c.pending.erase(0, end + 4);
    c.head_done = true;
  }
  std::size_t at = 0;
  while (at < c.pending.size()) {
    if (c.in_chunk) {
      const std::size_t take = std::min(c.chunk_left, c.pending.size() - at);
      c.text.append(c.pending, at, take);
      at += take;
      c.chunk_left -= take;
      if (c.chunk_left == 0) c.in_chunk = false;
      continue;
    }
    // Between chunks: the CRLF after data, then "size\r\n".
    const auto line = c.pending.find("\r\n", at);
    if (line == std::string::npos) break;
    if (line == at) {
      at += 2;
      continue;
    }
    c.chunk_left = std::strtoul(c.pending.substr(at, line - at).c_str(), nullptr, 16);
    at = line + 2;
    c.in_chunk = c.chunk_left > 0;
  }
  c.pending.erase(0, at);
  take_events(c, delays);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: sse_clients_bench PORT TOKEN CLIENTS SECONDS [QUERY]\n");
    return 2;
  }
  const auto port = static_cast<std::uint16_t>(std::atoi(argv[1]));
  const std::string token = argv[2];
  const int count = std::atoi(argv[3]);
  const int seconds = std::atoi(argv[4]);
  const std::string query = argc > 5 ? argv[5] : "?types=record";
  std::vector<client> clients(static_cast<std::size_t>(count));
  for (client& c : clients) {
    c.fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(c.fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      std::perror("connect");
      return 1;
    }
    const std::string request = "GET /v1/events" + query +
                                " HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + token +
                                "\r\nAccept: text/event-stream\r\n\r\n";
    (void)::send(c.fd, request.data(), request.size(), MSG_NOSIGNAL);
  }
  std::vector<std::int64_t> delays;
  std::vector<pollfd> fds(clients.size());
  std::vector<char> buffer(256 * 1024);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{seconds};
  while (std::chrono::steady_clock::now() < until) {
    for (std::size_t i = 0; i < clients.size(); ++i)
      fds[i] = {clients[i].closed ? -1 : clients[i].fd, POLLIN, 0};
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::recv(clients[i].fd, buffer.data(), buffer.size(), 0);
      if (n <= 0) {
        clients[i].closed = true;
        continue;
      }
      feed(clients[i], buffer.data(), static_cast<std::size_t>(n), delays);
    }
  }
  std::uint64_t events = 0, least = UINT64_MAX, most = 0, bytes = 0;
  int cut = 0, closed = 0;
  for (client& c : clients) {
    events += c.events;
    bytes += c.bytes;
    least = std::min(least, c.events);
    most = std::max(most, c.events);
    cut += c.cut ? 1 : 0;
    closed += c.closed ? 1 : 0;
    ::close(c.fd);
  }
  std::sort(delays.begin(), delays.end());
  const auto pct = [&](double p) {
    if (delays.empty()) return std::int64_t{-1};
    return delays[std::min(delays.size() - 1,
                           static_cast<std::size_t>(p * static_cast<double>(delays.size())))];
  };
  std::printf(
      "{\"clients\": %d, \"seconds\": %d, \"events\": %llu, \"events_per_client_min\": %llu, "
      "\"events_per_client_max\": %llu, \"bytes\": %llu, \"cut\": %d, \"closed\": %d, "
      "\"delay_ms\": {\"samples\": %zu, \"p50\": %lld, \"p99\": %lld, \"max\": %lld}}\n",
      count, seconds, static_cast<unsigned long long>(events),
      static_cast<unsigned long long>(least), static_cast<unsigned long long>(most),
      static_cast<unsigned long long>(bytes), cut, closed, delays.size(),
      static_cast<long long>(pct(0.5)), static_cast<long long>(pct(0.99)),
      static_cast<long long>(delays.empty() ? -1 : delays.back()));
  return 0;
}
