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
#include <string_view>
#include <vector>

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// One client: its socket, the HTTP head still to skip, the chunked body's state and
/// the text of the event being read. The bytes are taken apart in one pass where they
/// were received: only a chunk-size line or an event cut by the end of a read is kept,
/// so that the client's own CPU (one thread for every client) stays below the server's.
struct client {
  int fd = -1;
  bool head_done = false;
  std::string head;            ///< The response head, until its blank line.
  std::string size_line;       ///< A chunk-size line cut by the end of a read.
  std::size_t chunk_left = 0;  ///< Data bytes of the current chunk still to come.
  bool in_chunk = false;
  bool after_chunk = false;  ///< The CRLF after a chunk's data is still to come.
  std::string text;          ///< The start of an event cut by the end of a chunk.
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
  bool cut = false;
  bool closed = false;
};

/// One whole event ("id: ...\nevent: KIND\ndata: ...").
void take_event(client& c, std::string_view e, std::vector<std::int64_t>& delays) {
  const auto line = e.find('\n');
  const std::string_view kind = line == std::string_view::npos ? e : e.substr(line + 1);
  if (kind.starts_with("event: closing")) c.cut = true;
  if (!kind.starts_with("event: record")) return;
  ++c.events;
  if ((c.events & 15U) != 0) return;
  // The record's stream id: `"id":"<ms>-<seq>"`, Redis' storing time.
  const auto at = e.find("\"id\":\"");
  if (at == std::string_view::npos || at + 6 + 13 > e.size()) return;
  std::int64_t stored = 0;
  for (const char d : e.substr(at + 6, 13)) stored = stored * 10 + (d - '0');
  if (stored > 0) delays.push_back(now_ms() - stored);
}

/// A chunk's data: whole events taken where they lie, a cut one kept for the next.
void take_data(client& c, std::string_view data, std::vector<std::int64_t>& delays) {
  if (!c.text.empty()) {
    // An event started in an earlier chunk: complete it first.
    std::size_t from = 0;
    std::size_t stop = std::string_view::npos;
    // The boundary may straddle the two pieces.
    if (c.text.back() == '\n' && !data.empty() && data.front() == '\n') {
      stop = 0;
      from = 1;
    } else {
      stop = data.find("\n\n");
      if (stop != std::string_view::npos) from = stop + 2;
    }
    if (stop == std::string_view::npos) {
      c.text.append(data);
      return;
    }
    c.text.append(data.substr(0, stop));
    take_event(c, c.text, delays);
    c.text.clear();
    data.remove_prefix(from);
  }
  std::size_t end;
  while ((end = data.find("\n\n")) != std::string_view::npos) {
    take_event(c, data.substr(0, end), delays);
    data.remove_prefix(end + 2);
  }
  c.text.assign(data);
}

void feed(client& c, const char* bytes, std::size_t n, std::vector<std::int64_t>& delays) {
  c.bytes += n;
  std::string_view in(bytes, n);
  if (!c.head_done) {
    c.head.append(in);
    const auto end = c.head.find("\r\n\r\n");
    if (end == std::string::npos) return;
    const std::string rest = c.head.substr(end + 4);
    c.head_done = true;
    c.head.clear();
    if (!rest.empty()) feed(c, rest.data(), rest.size(), delays);
    c.bytes -= rest.size();
    return;
  }
  while (!in.empty()) {
    if (c.in_chunk) {
      const std::size_t take = std::min(c.chunk_left, in.size());
      take_data(c, in.substr(0, take), delays);
      in.remove_prefix(take);
      c.chunk_left -= take;
      if (c.chunk_left == 0) {
        c.in_chunk = false;
        c.after_chunk = true;
      }
      continue;
    }
    // Between chunks: the CRLF after data, then "size\r\n".
    const auto line = in.find('\n');
    if (line == std::string_view::npos) {
      c.size_line.append(in);
      return;
    }
    c.size_line.append(in.substr(0, line + 1));
    in.remove_prefix(line + 1);
    if (c.after_chunk) {
      c.after_chunk = false;
      c.size_line.clear();
      continue;
    }
    c.chunk_left = std::strtoul(c.size_line.c_str(), nullptr, 16);
    c.size_line.clear();
    c.in_chunk = c.chunk_left > 0;
  }
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
    if (::send(c.fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      std::perror("send");
      return 1;
    }
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
