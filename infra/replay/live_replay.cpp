#include "infra/replay/live_replay.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "codecs/imei.hpp"

namespace tgw::infra::replay {
namespace {

using clock = std::chrono::steady_clock;

int connect_to(const live_settings& s, std::string& error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(s.port);
  if (const int rc = getaddrinfo(s.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = "cannot resolve " + s.host + ": " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) error = "cannot connect to " + s.host + ":" + port;
  return fd;
}

// One device's side of one connection.
class device_run {
 public:
  device_run(const capture::recorded_connection& rec, const live_settings& s,
             clock::time_point start, std::int64_t capture_start_us)
      : rec_(rec), s_(s), start_(start), capture_start_us_(capture_start_us) {}

  connection_report run() {
    connection_report r;
    r.number = rec_.number;
    r.device = rec_.device.to_string();
    r.problems = rec_.problems;
    std::vector<std::uint8_t> recorded;
    for (const auto& c : rec_.chunks)
      if (!c.from_device) recorded.insert(recorded.end(), c.bytes.begin(), c.bytes.end());
    const auto first = std::find_if(rec_.chunks.begin(), rec_.chunks.end(),
                                    [](const auto& c) { return c.from_device; });
    codecs::imei id;
    if (first != rec_.chunks.end() && codecs::parse_imei_packet(first->bytes, id).ok())
      r.imei = std::string(id.str());

    sleep_until(rec_.first_us);
    std::string error;
    fd_ = connect_to(s_, error);
    if (fd_ < 0) {
      r.problems.push_back(error);
    } else {
      play(r, answer_bytes(recorded));
      ::close(fd_);
    }
    r.recorded = read_answers(recorded);
    r.replayed = read_answers(received_);
    r.bytes_equal = without_commands(recorded) == without_commands(received_);
    return r;
  }

 private:
  // `answers[n]`: how many of the recording's first n gateway bytes answer the device;
  // the commands among them came from an operator and will not come again.
  void play(connection_report& r, const std::vector<std::size_t>& answers) {
    std::size_t sent_by_gateway = 0;  // gateway bytes the recording shows up to this point
    std::size_t expected = 0;         // of which answers
    for (const auto& c : rec_.chunks) {
      if (!c.from_device) {
        sent_by_gateway += c.bytes.size();
        expected = answers[sent_by_gateway];
        continue;
      }
      // A device waits for the answer to what it sent before sending more.
      if (!await(expected)) {
        r.problems.push_back("no answer within " + std::to_string(s_.answer_timeout.count()) +
                             " ms (got " + std::to_string(received_.size()) + " of " +
                             std::to_string(expected) + " bytes)");
        return;
      }
      if (eof_) {
        r.problems.push_back("the gateway closed the connection early");
        return;
      }
      sleep_until(c.unix_us);
      if (::send(fd_, c.bytes.data(), c.bytes.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(c.bytes.size())) {
        r.problems.push_back("send failed");
        return;
      }
    }
    if (!await(expected))
      r.problems.push_back("no answer within " + std::to_string(s_.answer_timeout.count()) +
                           " ms at the end (got " + std::to_string(received_.size()) + " of " +
                           std::to_string(expected) + " bytes)");
    if (rec_.closed == capture::close_cause::device_fin ||
        rec_.closed == capture::close_cause::device_rst) {
      sleep_until(rec_.closed_us);
      ::shutdown(fd_, SHUT_WR);
    }
    // Whatever the gateway still says, until it closes or goes quiet.
    if (rec_.closed != capture::close_cause::none) await(SIZE_MAX);
  }

  void sleep_until(std::int64_t unix_us) const {
    if (s_.speed <= 0) return;
    const auto offset = std::chrono::microseconds(
        static_cast<std::int64_t>(static_cast<double>(unix_us - capture_start_us_) / s_.speed));
    std::this_thread::sleep_until(start_ + offset);
  }

  // Reads until `want` bytes came, the peer closed, or the answer timeout passed.
  bool await(std::size_t want) {
    const auto deadline = clock::now() + s_.answer_timeout;
    while (received_.size() < want && !eof_) {
      // Rounded up, so the answer timeout is never cut short by the truncation.
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      std::uint8_t buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        eof_ = true;
        break;
      }
      received_.insert(received_.end(), buffer, buffer + n);
    }
    return received_.size() >= want || want == SIZE_MAX;
  }

  const capture::recorded_connection& rec_;
  const live_settings& s_;
  clock::time_point start_;
  std::int64_t capture_start_us_;
  int fd_ = -1;
  bool eof_ = false;
  std::vector<std::uint8_t> received_;
};

}  // namespace

std::vector<connection_report> replay_live(const capture::capture_set& capture,
                                           const live_settings& settings) {
  std::vector<connection_report> reports(capture.connections.size());
  if (capture.connections.empty()) return reports;
  std::int64_t first_us = capture.connections.front().first_us;
  for (const auto& c : capture.connections) first_us = std::min(first_us, c.first_us);
  const auto start = clock::now();
  std::vector<std::thread> threads;
  threads.reserve(capture.connections.size());
  std::atomic<std::size_t> done{0};
  for (std::size_t i = 0; i < capture.connections.size(); ++i)
    threads.emplace_back([&, i] {
      reports[i] = device_run(capture.connections[i], settings, start, first_us).run();
      done.fetch_add(1);
    });
  auto last = clock::now();
  if (settings.progress)
    while (done.load() < threads.size()) {
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
      if (clock::now() - last >= std::chrono::seconds{1}) {
        last = clock::now();
        settings.progress(done.load(), threads.size());
      }
    }
  for (auto& t : threads) t.join();
  return reports;
}

}  // namespace tgw::infra::replay
