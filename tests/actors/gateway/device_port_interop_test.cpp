// Interoperability with a TLS stack that is not OpenSSL: GnuTLS's gnutls-cli (Debian
// gnutls-bin, installed by scripts/setup) as the device, on TLS 1.2 and 1.3 with
// AES-GCM and ChaCha20, and in TLS 1.3 a KeyUpdate of the client's, asked of both
// sides (^rekey^) and of its own side only (^rekey1^). Every frame must be ACKed.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/actors/gateway/device_port_fixture.hpp"

namespace tgw::test::device_port {
namespace {

// gnutls-cli on a pair of pipes: what is written to its stdin goes to the gateway as
// application data, and what the gateway sends comes out on its stdout; its own
// messages go to a log file.
class gnutls_device {
 public:
  gnutls_device(std::uint16_t port, const std::string& ca, const std::string& priority,
                const std::string& log)
      : log_(log) {
    int in[2];
    int out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (err >= 0) ::dup2(err, 2);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      ::close(in[1]);
      ::close(out[0]);
      const std::string port_text = std::to_string(port);
      ::execlp("gnutls-cli", "gnutls-cli", "--port", port_text.c_str(), "--x509cafile", ca.c_str(),
               "--priority", priority.c_str(), "--inline-commands", "--logfile", log.c_str(),
               "127.0.0.1", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~gnutls_device() {
    finish();
    ::close(from_);
  }
  gnutls_device(const gnutls_device&) = delete;
  gnutls_device& operator=(const gnutls_device&) = delete;

  void send(const bytes& b) const {
    ASSERT_EQ(::write(to_, b.data(), b.size()), static_cast<ssize_t>(b.size()));
  }
  /// An inline command of gnutls-cli's; it must start a line of its input, so it is
  /// sent only after a frame that ends in a line feed.
  void command(const std::string& name) const {
    const std::string line = "^" + name + "^\n";
    send(bytes(line.begin(), line.end()));
  }
  /// Exactly n bytes from the gateway within 5 s, or nullopt.
  std::optional<bytes> receive(std::size_t n) const {
    bytes out;
    const auto end = std::chrono::steady_clock::now() + 5s;
    while (out.size() < n && std::chrono::steady_clock::now() < end) {
      pollfd p{from_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      std::uint8_t buf[64];
      const ssize_t r = ::read(from_, buf, std::min(sizeof buf, n - out.size()));
      if (r <= 0) return std::nullopt;
      out.insert(out.end(), buf, buf + r);
    }
    if (out.size() < n) return std::nullopt;
    return out;
  }
  /// Ends its input, so that it closes the session and exits; stopped if it has not
  /// within 5 s.
  void finish() {
    if (pid_ < 0) return;
    ::close(to_);
    const auto end = std::chrono::steady_clock::now() + 5s;
    while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > end) {
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
    pid_ = -1;
  }
  /// gnutls-cli's own messages: complete once it has exited (its log is buffered).
  [[nodiscard]] std::string messages() const { return read_file(log_); }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

// A one-record packet whose last byte is a line feed (its CRC's), so that an inline
// command may follow it; `nth` picks a different one each time.
bytes packet_ending_in_line_feed(int nth) {
  for (std::uint64_t t = 1'700'000'000'000 + static_cast<std::uint64_t>(nth) * 10'000'000;;
       t += 1000) {
    bytes p = packet(1, t);
    if (p.back() == '\n') return p;
  }
}

struct interop_case {
  std::string name;
  std::string priority;  ///< GnuTLS priority string: one version, one cipher.
  std::string cipher;    ///< As gnutls-cli's description of the session ends.
  bool tls13;
};

void PrintTo(const interop_case& c, std::ostream* out) {
  *out << c.name;
}

class DevicePortInterop : public DevicePort, public ::testing::WithParamInterface<interop_case> {};

TEST_P(DevicePortInterop, GnutlsCliIsAckedForEveryFrame) {
  if (run_command("command -v gnutls-cli").exit_code != 0)
    GTEST_SKIP() << "gnutls-cli is not installed (Debian gnutls-bin; scripts/setup installs it)";
  const interop_case& c = GetParam();
  start(tls_flags());
  gnutls_device d(port, ca.cert, c.priority, dir + "/gnutls-cli.log");
  d.send(handshake_packet(imei_a));
  ASSERT_EQ(d.receive(1), bytes{0x01}) << d.messages();
  int sent = 0;
  auto send_acked = [&](int count) {
    for (int i = 0; i < count; ++i) {
      d.send(packet_ending_in_line_feed(sent++));
      ASSERT_EQ(d.receive(4), ack(1)) << "frame " << sent << "\n" << d.messages();
    }
  };
  send_acked(5);
  if (c.tls13) {
    d.command("rekey");  // a KeyUpdate with update_requested: both sides move on
    send_acked(5);
    d.command("rekey1");  // the client's keys alone
    send_acked(5);
  }
  d.finish();
  const std::string m = d.messages();
  const std::string description =
      std::string("- Description: (") + (c.tls13 ? "TLS1.3" : "TLS1.2") + "-X.509)-(ECDHE-";
  const auto at = m.find(description);
  ASSERT_NE(at, std::string::npos) << m;
  EXPECT_TRUE(m.substr(at, m.find('\n', at) - at).ends_with("-(" + c.cipher + ")")) << m;
  if (c.tls13) {
    const auto first = m.find("Rekey was completed");
    ASSERT_NE(first, std::string::npos) << m;
    EXPECT_NE(m.find("Rekey was completed", first + 1), std::string::npos) << m;
  }
  EXPECT_EQ(db.command({"XLEN", "telemetry:records"}).integer, sent);
  EXPECT_EQ(read_file(log).find("TLS read failed"), std::string::npos) << read_file(log);
}

INSTANTIATE_TEST_SUITE_P(
    GnuTls, DevicePortInterop,
    ::testing::Values(
        interop_case{"tls12_aes128gcm", "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM",
                     "AES-128-GCM", false},
        interop_case{"tls12_aes256gcm", "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM",
                     "AES-256-GCM", false},
        interop_case{"tls12_chacha20",
                     "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+CHACHA20-POLY1305",
                     "CHACHA20-POLY1305", false},
        interop_case{"tls13_aes128gcm", "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM",
                     "AES-128-GCM", true},
        interop_case{"tls13_aes256gcm", "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-256-GCM",
                     "AES-256-GCM", true},
        interop_case{"tls13_chacha20",
                     "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305",
                     "CHACHA20-POLY1305", true}),
    [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace tgw::test::device_port
