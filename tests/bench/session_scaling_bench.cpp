// How the session path scales with cores, without sockets, Redis or a simulator:
// devices whose frames go straight into session actors as messages, each device
// sending its next 1-record packet when the ACK of the last one comes back, as a
// tracker does. The telemetry writers persist into in-memory stores (one per shard,
// as each shard has its own Redis connection). Packets/s with 1 and 2 CAF scheduler
// threads and 1 and 2 writer shards; beside them, in the same run, one thread
// decoding the same packets with the codec alone, the floor of any session's work.
//
// With --pin, each run is held to as many cores as it has scheduler threads (the
// first one or two the process may use), so "1 thread" means one core for the whole
// run, writers and all, and the ratio compares one core with two. Unpinned, the 1+1
// run already keeps about 1.4 cores busy on a 2-core machine (the writer and this
// thread run beside the scheduler), which caps what 2+2 can show there.
//
// Usage: session_scaling_bench [--devices N] [--packets P] [--rounds R] [--stealing]
//                              [--pin] [--linger-us U]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/resource.h>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_atoms.hpp"
#include "actors/gateway/session.hpp"
#include "actors/gateway/telemetry_writer.hpp"
#include "actors/ports/device_link.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/tcp_framer.hpp"
#include "infra/metrics/gateway_counters.hpp"
#include "infra/telemetry/memory_telemetry_store.hpp"
#include "tests/bench/codec_corpus.hpp"

namespace {

using namespace tgw;
using clock_type = std::chrono::steady_clock;

// One framed message as the connection hands it to its session.
struct framed {
  std::uint8_t kind = 0;
  std::uint8_t codec = 0;
  std::vector<std::uint8_t> bytes;
};

// Everything the devices of one run share: the packets and the finish line.
struct run_state {
  std::vector<framed> packets;  // 1-record AVL frames, cycled through by every device
  std::size_t packets_per_device = 0;
  std::atomic<std::size_t> devices_left{0};
  std::mutex mutex;
  std::condition_variable all_done;
};

// A device: the session's link. An answer to the handshake or to a packet sends the
// next packet, from the session's own thread (the only one that calls the link).
class bench_device final : public ports::device_link {
 public:
  bench_device(run_state& run, std::size_t first) : run_(run), next_(first) {}
  void attach(actors::gateway::session_actor session) { session_ = std::move(session); }

  void send(std::vector<std::uint8_t> bytes) override {
    if (bytes.size() != 1 && bytes.size() != 4) return;  // not an ACK or a verdict
    if (sent_ == run_.packets_per_device) {
      if (run_.devices_left.fetch_sub(1) == 1) {
        const std::lock_guard lock(run_.mutex);
        run_.all_done.notify_one();
      }
      return;
    }
    const framed& p = run_.packets[(next_++) % run_.packets.size()];
    ++sent_;
    caf::anon_send(session_, actors::gateway::frame_atom::value, p.kind, p.codec, p.bytes);
  }
  void close(std::string reason) override {
    std::fprintf(stderr, "session_scaling_bench: a session closed: %s\n", reason.c_str());
    std::abort();
  }
  void frame_done() override {}
  [[nodiscard]] std::string peer() const override { return peer_; }

 private:
  run_state& run_;
  actors::gateway::session_actor session_;
  std::size_t next_;
  std::size_t sent_ = 0;
  std::string peer_ = "127.0.0.1:1";
};

framed frame_message(const std::vector<std::uint8_t>& bytes, bool imei) {
  codecs::tcp_framer framer(codecs::default_max_frame_size, imei);
  framer.append(bytes);
  const codecs::frame_result r = framer.next();
  if (!r.status.ok()) {
    std::fprintf(stderr, "session_scaling_bench: the framer refused a corpus frame\n");
    std::exit(1);
  }
  return {static_cast<std::uint8_t>(r.value.kind), r.value.codec,
          std::vector<std::uint8_t>(r.value.bytes.begin(), r.value.bytes.end())};
}

std::vector<std::uint8_t> imei_frame(std::uint64_t imei) {
  const std::string digits = std::to_string(imei);
  std::vector<std::uint8_t> b{0, static_cast<std::uint8_t>(digits.size())};
  b.insert(b.end(), digits.begin(), digits.end());
  return b;
}

struct scaling_config : caf::actor_system_config {
  scaling_config(std::size_t threads, bool stealing) {
    set("scheduler.max-threads", threads);
    // The gateway's --actor-scheduler: sharing (its default) or stealing.
    set("scheduler.policy", stealing ? caf::atom("stealing") : caf::atom("sharing"));
    set("logger.verbosity", caf::atom("quiet"));
  }
};

// CPU time of the whole process so far, every thread's.
double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Holds this process's threads, and every thread started while it lives, to the first
// `cores` CPUs it may use; gives back the old set at the end. 0: no change.
class pinned_cores {
 public:
  explicit pinned_cores(std::size_t cores) {
    if (cores == 0) return;
    if (::sched_getaffinity(0, sizeof(before_), &before_) != 0) return;
    cpu_set_t chosen;
    CPU_ZERO(&chosen);
    std::size_t taken = 0;
    for (std::size_t cpu = 0; cpu < static_cast<std::size_t>(CPU_SETSIZE) && taken < cores; ++cpu)
      if (CPU_ISSET(cpu, &before_)) {
        CPU_SET(cpu, &chosen);
        ++taken;
      }
    if (taken < cores) {
      std::fprintf(stderr, "session_scaling_bench: --pin needs %zu cores, %zu allowed\n", cores,
                   taken);
      std::exit(2);
    }
    active_ = ::sched_setaffinity(0, sizeof(chosen), &chosen) == 0;
  }
  ~pinned_cores() {
    if (active_) ::sched_setaffinity(0, sizeof(before_), &before_);
  }
  pinned_cores(const pinned_cores&) = delete;
  pinned_cores& operator=(const pinned_cores&) = delete;

 private:
  cpu_set_t before_{};
  bool active_ = false;
};

struct throughput {
  double packets_per_s = 0;
  double cores = 0;  ///< CPU time over wall time: how many cores the run kept busy.
};

// Packets/s of `devices` devices sending `per_device` packets each.
throughput run_sessions(const std::vector<framed>& packets, std::size_t devices,
                        std::size_t per_device, std::size_t threads, std::size_t shards,
                        bool stealing, bool pin, std::chrono::microseconds linger) {
  // Before the actor system exists, so that its threads inherit the set.
  const pinned_cores held(pin ? threads : 0);
  scaling_config cfg(threads, stealing);
  caf::actor_system sys{cfg};
  auto counters = std::make_shared<infra::metrics::gateway_counters>();
  auto config = std::make_shared<actors::gateway::session_config>();
  config->instance_id = "bench";
  config->counters = counters;
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  actors::gateway::writer_config writing;
  writing.linger = linger;
  for (std::size_t i = 0; i < shards; ++i) {
    auto store = std::make_shared<infra::telemetry::memory_telemetry_store>("bench", now_ms);
    // Detached, as the gateway spawns them: a writer blocks on its store.
    config->writers.push_back(sys.spawn<caf::detached>(
        actors::gateway::telemetry_writer, writing, std::shared_ptr<ports::telemetry_store>(store),
        static_cast<int>(i), counters));
  }
  std::shared_ptr<const actors::gateway::session_config> shared = config;

  run_state run;
  run.packets = packets;
  run.packets_per_device = per_device;
  run.devices_left = devices;
  std::vector<std::shared_ptr<bench_device>> links;
  std::vector<actors::gateway::session_actor> sessions;
  std::vector<framed> handshakes;
  for (std::size_t d = 0; d < devices; ++d) {
    links.push_back(std::make_shared<bench_device>(run, d));
    sessions.push_back(sys.spawn(actors::gateway::session, links.back(), shared));
    links.back()->attach(sessions.back());
    handshakes.push_back(frame_message(imei_frame(350000000000000 + d), true));
  }
  const auto start = clock_type::now();
  const double cpu_start = process_cpu_seconds();
  for (std::size_t d = 0; d < devices; ++d)
    caf::anon_send(sessions[d], actors::gateway::frame_atom::value, handshakes[d].kind,
                   handshakes[d].codec, handshakes[d].bytes);
  {
    // A device whose packet is never ACKed would hold the run forever.
    std::unique_lock lock(run.mutex);
    if (!run.all_done.wait_for(lock, std::chrono::minutes(2),
                               [&] { return run.devices_left.load() == 0; })) {
      std::fprintf(stderr, "session_scaling_bench: %zu devices still wait for an ACK\n",
                   run.devices_left.load());
      std::exit(1);
    }
  }
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  const double cpu = process_cpu_seconds() - cpu_start;
  for (auto& s : sessions) caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  for (auto& w : config->writers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  return {static_cast<double>(devices * per_device) / seconds, cpu / seconds};
}

// Packets/s of one thread decoding the same packets, the codec's share alone.
double decode_only(const std::vector<framed>& packets, std::size_t count) {
  codecs::avl_packet out;
  std::size_t ok = 0;
  const auto start = clock_type::now();
  for (std::size_t i = 0; i < count; ++i)
    if (codecs::decode_avl_frame(packets[i % packets.size()].bytes, out).ok()) ++ok;
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (ok != count) std::exit(1);
  return static_cast<double>(count) / seconds;
}

std::size_t flag(int argc, char** argv, const std::string& name, std::size_t fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return std::strtoull(argv[i + 1], nullptr, 10);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::puts(
          "Usage: session_scaling_bench [--devices N (1000)] [--packets P (200)] "
          "[--rounds R (3)] [--stealing] [--pin] [--linger-us U (0)]\n"
          "Session actors fed 1-record packets as messages (no sockets, no Redis), writers "
          "on in-memory stores;\npackets/s with 1 and 2 scheduler threads and 1 and 2 "
          "writer shards, beside one thread decoding the same packets.\n"
          "CAF's sharing scheduler, the gateway's default; --stealing: work stealing.\n"
          "--pin: each run on as many cores as it has scheduler threads (its writers and "
          "the feeding thread too).\n"
          "--linger-us: the writers' linger (tgw serve --writer-linger-us), 0 by default.");
      return 0;
    }
  }
  const std::size_t devices = flag(argc, argv, "--devices", 1000);
  const std::size_t per_device = flag(argc, argv, "--packets", 200);
  const std::size_t rounds = flag(argc, argv, "--rounds", 3);
  bool stealing = false;
  bool pin = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--stealing") stealing = true;
    if (std::string(argv[i]) == "--pin") pin = true;
  }
  const auto linger = std::chrono::microseconds{flag(argc, argv, "--linger-us", 0)};
  if (devices == 0 || per_device == 0 || rounds == 0) {
    std::fputs("session_scaling_bench: --devices, --packets and --rounds must be positive\n",
               stderr);
    return 2;
  }

  spdlog::set_level(spdlog::level::warn);  // a "connected" line per device otherwise
  std::vector<framed> packets;
  for (const auto& set : bench::make_codec_corpus()) {
    if (set.name != "8E") continue;
    for (const auto& f : set.frames) {
      if (f.records != 1) continue;
      const auto b = set.frame_bytes(f);
      packets.push_back(frame_message(std::vector<std::uint8_t>(b.begin(), b.end()), false));
    }
  }
  if (packets.size() < 2) {
    std::fputs("session_scaling_bench: the corpus has too few 1-record packets\n", stderr);
    return 1;
  }

  std::printf(
      "%zu devices x %zu 1-record Codec 8E packets, %zu rounds, CAF %s scheduler%s; "
      "packets/s\n",
      devices, per_device, rounds, stealing ? "stealing" : "sharing",
      pin ? ", each run pinned to as many cores as scheduler threads" : "");
  std::printf(
      "round | decode only, 1 thread | 1 thread, 1 shard | 2 threads, 1 shard | "
      "1 thread, 2 shards | 2 threads, 2 shards | ratio 2+2 / 1+1\n");
  std::printf(
      "(each run: packets/s and, in brackets, the cores it kept busy: the "
      "scheduler threads, the writers' own threads and this one)\n");
  const auto cell = [](const throughput& t) {
    return std::to_string(static_cast<long long>(t.packets_per_s)) + " (" +
           std::to_string(t.cores).substr(0, 4) + ")";
  };
  for (std::size_t r = 1; r <= rounds; ++r) {
    const double base = decode_only(packets, devices * per_device);
    const throughput t1s1 = run_sessions(packets, devices, per_device, 1, 1, stealing, pin, linger);
    const throughput t2s1 = run_sessions(packets, devices, per_device, 2, 1, stealing, pin, linger);
    const throughput t1s2 = run_sessions(packets, devices, per_device, 1, 2, stealing, pin, linger);
    const throughput t2s2 = run_sessions(packets, devices, per_device, 2, 2, stealing, pin, linger);
    std::printf("%zu | %.0f | %s | %s | %s | %s | %.2f\n", r, base, cell(t1s1).c_str(),
                cell(t2s1).c_str(), cell(t1s2).c_str(), cell(t2s2).c_str(),
                t2s2.packets_per_s / t1s1.packets_per_s);
    std::fflush(stdout);
  }
  return 0;
}
