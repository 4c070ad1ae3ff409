// Command round trip against a running gateway and its Redis (scripts/bench-commands):
//  - gateway: `threads` publishers send commands to random devices of a connected
//    simulated fleet at `rate` commands/s in total and wait for each response; the
//    latency runs from the moment a command was due, not when it was sent, so a slow
//    response delays no measurement (no coordinated omission);
//  - baseline, same run and rate: XADD on one connection, XREAD BLOCK on another, the
//    time from before the XADD to the entry arriving: the floor any stream-routed
//    command pays.
// Prints one JSON object.
// Usage: command_bench PORT IMEI_BASE DEVICES RATE SECONDS [THREADS]
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "infra/commands/command_publisher.hpp"
#include "infra/sim/latency_histogram.hpp"

namespace {

using namespace std::chrono;
using tgw::infra::redis::connection;
using tgw::infra::redis::endpoint;
using tgw::infra::sim::latency_histogram;

nlohmann::json figures(const tgw::infra::sim::latency_snapshot& s) {
  return {{"count", s.total()},
          {"p50_ms", s.percentile_ms(0.50)},
          {"p99_ms", s.percentile_ms(0.99)},
          {"max_ms", s.max_ms()}};
}

struct gateway_result {
  latency_histogram latency;
  std::mutex mutex;
  std::map<std::string, std::uint64_t> outcomes;
};

void publish_loop(const endpoint& where, unsigned long long imei_base, std::size_t devices,
                  double rate, seconds length, int threads, int index, gateway_result& out) {
  tgw::infra::commands::command_publisher publisher({where, 2000ms, 3000ms, "bench-publisher"},
                                                    200ms);
  std::mt19937_64 rng(static_cast<std::uint64_t>(index) + 1);
  std::uniform_int_distribution<std::size_t> pick(0, devices - 1);
  const auto interval = duration_cast<nanoseconds>(duration<double>(threads / rate));
  const auto start = steady_clock::now() + duration_cast<nanoseconds>(interval * index / threads);
  const auto end = start + length;
  for (auto due = start; due < end; due += interval) {
    std::this_thread::sleep_until(due);
    const std::string imei = std::to_string(imei_base + pick(rng));
    std::string error;
    const auto sent = publisher.publish(imei, "getinfo", 12, 60s, false, error);
    std::string outcome;
    if (!sent) {
      outcome = "error: " + error;
    } else if (sent->status != "sent") {
      outcome = sent->status;
    } else {
      const auto r =
          publisher.wait_response(imei, sent->command_id, sent->last_response_id, 10s, error);
      outcome = !r ? "no response"
                   : r->status + (r->failure_reason.empty() ? "" : "/" + r->failure_reason);
      if (r && r->status == "responded") out.latency.record(steady_clock::now() - due);
    }
    const std::lock_guard lock(out.mutex);
    ++out.outcomes[outcome];
  }
}

tgw::infra::sim::latency_snapshot stream_baseline(const endpoint& where, double rate,
                                                  seconds length) {
  latency_histogram h;
  const std::string stream = "bench:roundtrip";
  connection writer({where, 2000ms, 3000ms, "bench-xadd"});
  connection reader({where, 2000ms, 3000ms, "bench-xread"});
  writer.command({"DEL", stream});
  std::atomic<bool> done{false};
  std::mutex mutex;
  std::map<std::string, steady_clock::time_point> sent_at;
  std::thread consumer([&] {
    std::string last = "$";
    while (!done.load()) {
      const auto v = reader.command({"XREAD", "BLOCK", "200", "STREAMS", stream, last});
      if (!v.is_array()) continue;
      const auto now = steady_clock::now();
      for (const auto& entry : v.elements.at(0).elements.at(1).elements) {
        last = entry.elements.at(0).text;
        const std::lock_guard lock(mutex);
        const auto it = sent_at.find(entry.elements.at(1).elements.at(1).text);
        if (it != sent_at.end()) h.record(now - it->second);
      }
    }
  });
  std::this_thread::sleep_for(300ms);  // the first XREAD is blocking before we add
  const auto interval = duration_cast<nanoseconds>(duration<double>(1.0 / rate));
  const auto start = steady_clock::now();
  std::uint64_t n = 0;
  for (auto due = start; due < start + length; due += interval, ++n) {
    std::this_thread::sleep_until(due);
    const std::string id = std::to_string(n);
    {
      const std::lock_guard lock(mutex);
      sent_at[id] = steady_clock::now();
    }
    writer.command({"XADD", stream, "*", "n", id, "payload", "getinfo"});
  }
  std::this_thread::sleep_for(300ms);
  done = true;
  consumer.join();
  writer.command({"DEL", stream});
  return h.snapshot();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: command_bench PORT IMEI_BASE DEVICES RATE SECONDS [THREADS]\n";
    return 2;
  }
  endpoint where;
  where.host = "127.0.0.1";
  where.port = static_cast<std::uint16_t>(std::atoi(argv[1]));
  const unsigned long long imei_base = std::strtoull(argv[2], nullptr, 10);
  const auto devices = static_cast<std::size_t>(std::atoll(argv[3]));
  const double rate = std::atof(argv[4]);
  const seconds length{std::atoi(argv[5])};
  const int threads = argc > 6 ? std::atoi(argv[6]) : 8;

  const auto baseline = stream_baseline(where, rate, length);
  gateway_result gateway;
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(publish_loop, std::cref(where), imei_base, devices, rate, length, threads, i,
                      std::ref(gateway));
  for (auto& t : pool) t.join();

  nlohmann::json out;
  out["rate_per_s"] = rate;
  out["seconds"] = length.count();
  out["threads"] = threads;
  out["devices"] = devices;
  out["gateway"] = figures(gateway.latency.snapshot());
  out["gateway"]["outcomes"] = gateway.outcomes;
  out["baseline_xadd_xread"] = figures(baseline);
  std::cout << out.dump() << '\n';
  return 0;
}
