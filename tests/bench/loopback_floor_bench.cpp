// What the kernel charges for the messages every packet is made of, on this machine:
// the floor under the gateway's and the simulator's CPU per packet
// (docs/PERFORMANCE.md, "TCP segments a packet on the loopback").
//  - one message: a `send` of SIZE bytes on one end of a loopback TCP connection and
//    its `recv` on the other, in one thread, so no wake-up is counted;
//  - a `recv` that finds the socket empty (EAGAIN), as Asio's speculative read does.
// Each is timed in wall-clock µs and in the process's user and kernel CPU µs
// (getrusage), so a figure can be set beside the per-packet CPU of scripts/bench-cost.
// Usage: loopback_floor_bench [MESSAGES (200000)] [SIZE (1)]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct cpu_clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  rusage usage{};
  cpu_clock() { getrusage(RUSAGE_SELF, &usage); }
};

double micros(const timeval& t) {
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
}

void report(const char* what, const cpu_clock& from, long count) {
  const cpu_clock to;
  const double n = static_cast<double>(count);
  const double wall = std::chrono::duration<double, std::micro>(to.wall - from.wall).count();
  std::printf("%-44s %8.3f µs wall  %8.3f µs user  %8.3f µs kernel\n", what, wall / n,
              (micros(to.usage.ru_utime) - micros(from.usage.ru_utime)) / n,
              (micros(to.usage.ru_stime) - micros(from.usage.ru_stime)) / n);
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "loopback_floor_bench: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const long messages = argc > 1 ? std::atol(argv[1]) : 200'000;
  const long size = argc > 2 ? std::atol(argv[2]) : 1;
  if (messages < 1 || size < 1 || size > 65'536) {
    std::fprintf(stderr, "usage: loopback_floor_bench [MESSAGES (200000)] [SIZE 1-65536 (1)]\n");
    return 2;
  }
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    fail("listen");
  const int sender = socket(AF_INET, SOCK_STREAM, 0);
  if (sender < 0 || connect(sender, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail("connect");
  const int receiver = accept(listener, nullptr, nullptr);
  if (receiver < 0) fail("accept");
  const int one = 1;
  setsockopt(sender, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (fcntl(receiver, F_SETFL, O_NONBLOCK) != 0) fail("fcntl");
  std::vector<char> buffer(static_cast<std::size_t>(size));

  std::printf("%ld messages of %ld byte(s) over 127.0.0.1, one thread\n", messages, size);
  const cpu_clock empty_from;
  for (long i = 0; i < messages; ++i)
    if (recv(receiver, buffer.data(), buffer.size(), 0) >= 0 || errno != EAGAIN)
      fail("a recv on an empty socket did not say EAGAIN");
  report("recv on an empty socket (EAGAIN)", empty_from, messages);

  const cpu_clock message_from;
  for (long i = 0; i < messages; ++i) {
    if (send(sender, buffer.data(), buffer.size(), 0) != size) fail("send");
    for (long got = 0; got < size;) {
      const ssize_t n =
          recv(receiver, buffer.data(), buffer.size() - static_cast<std::size_t>(got), 0);
      if (n < 0 && errno == EAGAIN) continue;  // still on its way: try again
      if (n <= 0) fail("recv");
      got += n;
    }
  }
  report("one message: send on one end, recv on the other", message_from, messages);
  close(sender);
  close(receiver);
  close(listener);
  return 0;
}
