#include "infra/sim/fleet.hpp"

#include <algorithm>
#include <exception>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include "codecs/avl_encode.hpp"
#include "codecs/tcp_framer.hpp"

namespace tgw::infra::sim {
namespace {

// Files a simulator process needs besides its sockets: stdio, the epoll and eventfd
// descriptors of the io_context, the resolver, a few for the runtime.
constexpr std::size_t file_margin = 64;

double seconds_between(std::chrono::steady_clock::time_point from,
                       std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

std::string format_progress(const fleet_progress& p) {
  return fmt::format(
      "{:6.0f}s connected {}/{} | {:.0f} packets/s {:.0f} records/s | ACK p50 {:.2f} ms "
      "p99 {:.2f} ms | errors {}",
      p.elapsed_s, p.connected, p.devices, p.packets_per_s, p.records_per_s, p.ack_p50_ms,
      p.ack_p99_ms, p.errors);
}

std::string ensure_file_limit(std::size_t devices) {
  const rlim_t needed = static_cast<rlim_t>(devices) + file_margin;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};  // Cannot tell; let sockets fail.
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return {};
  return fmt::format(
      "{} devices need about {} open files, but this process may open only {} (hard limit {}); "
      "lower --count, run several simulators, or raise the limit (ulimit -n)",
      devices, needed, limit.rlim_cur,
      limit.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(limit.rlim_max));
}

namespace {

std::vector<std::unique_ptr<net::asio::io_context>> make_io_contexts(std::size_t threads) {
  std::vector<std::unique_ptr<net::asio::io_context>> ios;
  for (std::size_t t = 0; t < std::max<std::size_t>(threads, 1); ++t)
    ios.push_back(std::make_unique<net::asio::io_context>(1));
  return ios;
}

}  // namespace

fleet::fleet(fleet_options options)
    : ios_(make_io_contexts(options.io_threads)),
      strand_(net::asio::make_strand(*ios_.front())),
      duration_timer_(strand_),
      options_(std::move(options)),
      generator_(options_.codec, options_.records_per_packet, options_.io_per_record) {
  if (const std::string error = validate(options_); !error.empty())
    throw std::invalid_argument(error);
}

fleet::~fleet() {
  try {
    if (!threads_.empty()) {
      stop();
      wait();
    }
  } catch (...) {
    // Only an allocation or mutex failure gets here, with io threads still running
    // on this object: nothing safe is left to do.
    std::terminate();
  }
}

void fleet::start() {
  if (env_) throw std::logic_error("fleet::start called twice");
  const std::string port = std::to_string(options_.target_port);
  net::tcp::endpoint tcp_target;
  net::udp::endpoint udp_target;
  if (options_.transport == transport_kind::tcp) {
    net::tcp::resolver resolver(*ios_.front());
    tcp_target = *resolver.resolve(options_.target_host, port).begin();
  } else {
    net::udp::resolver resolver(*ios_.front());
    udp_target = *resolver.resolve(options_.target_host, port).begin();
  }
  const net::asio::ip::address target_address =
      options_.transport == transport_kind::tcp ? tcp_target.address() : udp_target.address();
  if (options_.source_spread > 0 && !(target_address.is_v4() && target_address.is_loopback()))
    throw std::invalid_argument(
        "--source-spread binds 127.0.x.y addresses, so the target must "
        "be an IPv4 loopback address, not " +
        target_address.to_string());
  warn_about_packet_size();
  if (!options_.acked_log_path.empty())
    acked_ = std::make_unique<acked_log>(options_.acked_log_path);
  if (options_.tls) {
    tls_ = std::make_unique<net::asio::ssl::context>(net::asio::ssl::context::tls_client);
    tls_->set_options(net::asio::ssl::context::no_tlsv1 | net::asio::ssl::context::no_tlsv1_1);
    if (!options_.tls_cert_file.empty()) {
      // Throws with OpenSSL's reason, as load_verify_file does.
      tls_->use_certificate_chain_file(options_.tls_cert_file);
      tls_->use_private_key_file(options_.tls_key_file, net::asio::ssl::context::pem);
    }
    if (options_.tls_version == "1.2" &&
        SSL_CTX_set_max_proto_version(tls_->native_handle(), TLS1_2_VERSION) != 1)
      throw std::runtime_error("--tls-version 1.2: OpenSSL refused to stop at TLS 1.2");
    if (options_.tls_ca_file.empty()) {
      tls_->set_verify_mode(net::asio::ssl::verify_none);
    } else {
      tls_->load_verify_file(options_.tls_ca_file);  // Throws with OpenSSL's reason.
      tls_->set_verify_mode(net::asio::ssl::verify_peer);
    }
  }
  env_ = std::make_unique<device_environment>(
      device_environment{options_, generator_, counters_, tcp_target, udp_target,
                         [this] { device_finished(); }, acked_.get(), tls_.get()});

  devices_.reserve(options_.count);
  remaining_.store(options_.count);
  for (std::size_t i = 0; i < options_.count; ++i) {
    codecs::imei id;
    // validate() keeps base + count within 15 digits, so the parse cannot fail.
    (void)codecs::imei::parse(std::to_string(options_.imei_base + i), id);
    devices_.push_back(std::make_unique<simulated_device>(*ios_[i % ios_.size()], *env_, i, id));
  }
  started_at_ = std::chrono::steady_clock::now();
  last_sample_at_ = started_at_;
  const auto count = static_cast<std::int64_t>(options_.count);
  for (std::size_t i = 0; i < devices_.size(); ++i)
    devices_[i]->start(options_.ramp_up * static_cast<std::int64_t>(i) / count);
  arm_duration();

  spdlog::info("simulate: {} devices towards {}:{} on {} io thread(s)", options_.count,
               options_.target_host, options_.target_port, options_.io_threads);
  // The devices' first handlers are queued, so each run() has work until its devices
  // finish.
  threads_.reserve(ios_.size());
  for (const auto& io : ios_) {
    threads_.emplace_back([io = io.get()] {
      for (;;) {
        try {
          io->run();
          return;
        } catch (const std::exception& e) {
          spdlog::error("simulate: io thread: {}", e.what());
        }
      }
    });
  }
}

void fleet::warn_about_packet_size() {
  // One sample packet, so a user learns before the run why a gateway refuses them all.
  motion_state sample = generator_.start(0, options_.seed, 0);
  std::vector<std::uint8_t> frame;
  if (codecs::encode_avl_frame(options_.codec, generator_.next(sample, 0), frame) !=
      codecs::errc::ok)
    return;
  if (frame.size() > codecs::default_max_frame_size)
    spdlog::warn(
        "simulate: packets of about {} bytes exceed the {} bytes gateways accept; "
        "lower --records-per-packet or --io-per-record",
        frame.size(), codecs::default_max_frame_size);
  else if (frame.size() > 1280)
    spdlog::warn("simulate: packets of about {} bytes exceed the 1280 bytes of real devices",
                 frame.size());
}

void fleet::arm_duration() {
  if (options_.duration.count() <= 0) return;
  duration_timer_.expires_after(options_.duration);
  duration_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) stop();
  });
}

void fleet::stop() {
  if (stopping_.exchange(true)) return;
  for (const auto& device : devices_) device->stop();
  net::asio::post(strand_, [this] { duration_timer_.cancel(); });
}

void fleet::device_finished() {
  if (remaining_.fetch_sub(1) != 1) return;
  // The last device is done: nothing may keep an io thread busy any longer.
  net::asio::post(strand_, [this] { duration_timer_.cancel(); });
  {
    const std::lock_guard lock(mutex_);
    finished_ = true;
    finished_at_ = std::chrono::steady_clock::now();
  }
  finished_cv_.notify_all();
}

bool fleet::wait_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return finished_cv_.wait_for(lock, timeout, [this] { return finished_; });
}

void fleet::wait() {
  {
    std::unique_lock lock(mutex_);
    finished_cv_.wait(lock, [this] { return finished_; });
  }
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

fleet_report fleet::report() const {
  fleet_report r;
  r.devices = options_.count;
  r.totals = counters_.totals();
  const latency_snapshot latency = counters_.ack_latency.snapshot();
  r.ack_p50_ms = latency.percentile_ms(0.50);
  r.ack_p99_ms = latency.percentile_ms(0.99);
  r.ack_max_ms = latency.max_ms();
  std::chrono::steady_clock::time_point end = std::chrono::steady_clock::now();
  {
    const std::lock_guard lock(mutex_);
    if (finished_) end = finished_at_;
  }
  r.elapsed_s = env_ ? seconds_between(started_at_, end) : 0.0;
  return r;
}

std::string format_progress_json(const fleet_progress& p) {
  std::string buckets;
  p.latency.for_each_bucket([&buckets](std::uint64_t highest_us, std::uint64_t count) {
    fmt::format_to(std::back_inserter(buckets), "{}\"{}\":{}", buckets.empty() ? "" : ",",
                   highest_us, count);
  });
  return fmt::format(
      "{{\"t\":{:.3f},\"connected\":{},\"devices\":{},\"packets_per_s\":{:.1f},"
      "\"records_per_s\":{:.1f},\"ack_p50_ms\":{:.3f},\"ack_p99_ms\":{:.3f},"
      "\"ack_max_us\":{},\"acks\":{},\"errors\":{},\"ack_latency_us\":{{{}}}}}",
      p.elapsed_s, p.connected, p.devices, p.packets_per_s, p.records_per_s, p.ack_p50_ms,
      p.ack_p99_ms, p.latency.max_us(), p.latency.total(), p.errors, buckets);
}

fleet_progress fleet::sample_progress() {
  const auto now = std::chrono::steady_clock::now();
  const fleet_totals totals = counters_.totals();
  const latency_snapshot latency = counters_.ack_latency_interval.take();
  const double dt = seconds_between(last_sample_at_, now);
  fleet_progress p;
  p.elapsed_s = seconds_between(started_at_, now);
  p.connected = counters_.connected.load(std::memory_order_relaxed);
  p.devices = options_.count;
  if (dt > 0) {
    p.packets_per_s = static_cast<double>(totals.packets_acked - last_sample_.packets_acked) / dt;
    p.records_per_s = static_cast<double>(totals.records_acked - last_sample_.records_acked) / dt;
  }
  p.ack_p50_ms = latency.percentile_ms(0.50);
  p.ack_p99_ms = latency.percentile_ms(0.99);
  p.errors = totals.errors();
  p.latency = latency;
  last_sample_at_ = now;
  last_sample_ = totals;
  return p;
}

fleet_report fleet::run(const fleet_options& options) {
  fleet f(options);
  f.start();
  f.wait();
  return f.report();
}

}  // namespace tgw::infra::sim
