// Command round trips through the application API (scripts/bench-api runs it beside
// command_bench, the publisher of `tgw command send`, in the same minutes): `threads`
// clients, each on one keep-alive connection, POST /v1/devices/{imei}/commands?wait=10
// to random devices of a connected simulated fleet at `rate` commands/s in total. Like
// command_bench, the latency runs from the moment a request was due, not when it was
// sent, so a slow answer delays no measurement (no coordinated omission); only answers
// 200 with the status "responded" are timed, every outcome is counted.
// The clients block in recv, one thread each, as command_bench's publishers do: a
// client's own CPU and scheduling stay out of the figure as far as they can.
// Prints one JSON object.
// Usage: api_post_bench PORT TOKEN IMEI_BASE DEVICES RATE SECONDS [THREADS]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "infra/sim/latency_histogram.hpp"

namespace {

using namespace std::chrono;
using tgw::infra::sim::latency_histogram;

struct result {
  latency_histogram latency;
  std::mutex mutex;
  std::map<std::string, std::uint64_t> outcomes;
};

/// One keep-alive HTTP/1.1 connection to the API, blocking.
class connection {
 public:
  explicit connection(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] bool open() const { return fd_ >= 0; }

  /// Sends `request` whole and reads one response: its status and body; nothing when
  /// the connection failed or the response could not be read.
  std::optional<std::pair<int, std::string>> exchange(const std::string& request) {
    std::size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return std::nullopt;
      sent += static_cast<std::size_t>(n);
    }
    std::size_t head_end = std::string::npos;
    while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return std::nullopt;
    const std::string head = buffer_.substr(0, head_end);
    const std::size_t at = head.find(' ');
    if (at == std::string::npos) return std::nullopt;
    const int status = std::atoi(head.c_str() + at + 1);
    std::size_t length = 0;
    for (const char* name : {"Content-Length: ", "content-length: "})
      if (const auto l = head.find(name); l != std::string::npos)
        length = std::strtoull(head.c_str() + l + std::string(name).size(), nullptr, 10);
    while (buffer_.size() < head_end + 4 + length)
      if (!fill()) return std::nullopt;
    std::string body = buffer_.substr(head_end + 4, length);
    buffer_.erase(0, head_end + 4 + length);
    return std::pair{status, std::move(body)};
  }

 private:
  bool fill() {
    char chunk[16384];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
};

void post_loop(std::uint16_t port, const std::string& token, unsigned long long imei_base,
               std::size_t devices, double rate, seconds length, int threads, int index,
               steady_clock::time_point begin, result& out) {
  connection api(port);
  std::mt19937_64 rng(static_cast<std::uint64_t>(index) + 1);
  std::uniform_int_distribution<std::size_t> pick(0, devices - 1);
  const std::string body = R"({"text":"getinfo"})";
  const auto interval = duration_cast<nanoseconds>(duration<double>(threads / rate));
  const auto start = begin + duration_cast<nanoseconds>(interval * index / threads);
  const auto end = start + length;
  for (auto due = start; due < end; due += interval) {
    std::this_thread::sleep_until(due);
    std::string outcome;
    if (!api.open()) {
      outcome = "connect failed";
    } else {
      const std::string request = "POST /v1/devices/" + std::to_string(imei_base + pick(rng)) +
                                  "/commands?wait=10 HTTP/1.1\r\nHost: bench\r\n"
                                  "Authorization: Bearer " +
                                  token + "\r\nContent-Type: application/json\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\n\r\n" + body;
      const auto answer = api.exchange(request);
      if (!answer) {
        outcome = "connection lost";
      } else if (answer->first != 200) {
        outcome = std::to_string(answer->first);
      } else {
        const auto json = nlohmann::json::parse(answer->second, nullptr, false);
        outcome = json.is_object() ? json.value("status", "no status") : "not JSON";
        if (outcome == "responded") out.latency.record(steady_clock::now() - due);
      }
    }
    const std::lock_guard lock(out.mutex);
    ++out.outcomes[outcome];
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::cerr << "usage: api_post_bench PORT TOKEN IMEI_BASE DEVICES RATE SECONDS [THREADS]\n";
    return 2;
  }
  const auto port = static_cast<std::uint16_t>(std::atoi(argv[1]));
  const std::string token = argv[2];
  const unsigned long long imei_base = std::strtoull(argv[3], nullptr, 10);
  const auto devices = static_cast<std::size_t>(std::atoll(argv[4]));
  const double rate = std::atof(argv[5]);
  const seconds length{std::atoi(argv[6])};
  const int threads = argc > 7 ? std::atoi(argv[7]) : 8;
  if (devices == 0 || rate <= 0 || threads <= 0) {
    std::cerr << "api_post_bench: DEVICES, RATE and THREADS must be positive\n";
    return 2;
  }

  result r;
  const auto begin = steady_clock::now() + 200ms;  // every connection open before the first
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(post_loop, port, std::cref(token), imei_base, devices, rate, length, threads,
                      i, begin, std::ref(r));
  for (auto& t : pool) t.join();

  const auto s = r.latency.snapshot();
  nlohmann::json out;
  out["rate_per_s"] = rate;
  out["seconds"] = length.count();
  out["threads"] = threads;
  out["devices"] = devices;
  out["api"] = {{"count", s.total()},
                {"p50_ms", s.percentile_ms(0.50)},
                {"p99_ms", s.percentile_ms(0.99)},
                {"max_ms", s.max_ms()}};
  out["api"]["outcomes"] = r.outcomes;
  std::cout << out.dump() << '\n';
  return 0;
}
