// Registry figures against a redis-server given on the command line:
//  - eviction of a dead instance holding N devices, by its reverse index and by the
//    scan mode, each timed with the Redis CPU it cost (INFO CPU before and after);
//  - a reconnect storm: D devices registering alternately on two instances, so every
//    registration moves a device (registrations per second).
// Prints one JSON object. Usage: registry_bench PORT [DEVICES] [STORM_DEVICES] [LIVE]
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "infra/registry/redis_registry_store.hpp"
#include "infra/registry/registry_keys.hpp"

namespace {

using namespace std::chrono;
using tgw::infra::redis::connection;
using tgw::infra::redis::endpoint;
namespace reg = tgw::infra::registry;

double redis_cpu_seconds(connection& c) {
  const auto info = c.command({"INFO", "CPU"}).text;
  double total = 0;
  for (const char* key : {"used_cpu_sys:", "used_cpu_user:"}) {
    const auto at = info.find(key);
    if (at != std::string::npos) total += std::atof(info.c_str() + at + std::strlen(key));
  }
  return total;
}

void populate(connection& c, const std::string& owner, std::size_t devices,
              unsigned long long first_imei) {
  std::vector<std::vector<std::string>> batch;
  for (std::size_t i = 0; i < devices; ++i) {
    const std::string imei = std::to_string(first_imei + i);
    batch.push_back({"HSET", reg::keys::registry, imei, owner});
    batch.push_back({"SADD", reg::keys::devices(owner), imei});
    if (batch.size() >= 20000) {
      c.pipeline(batch);
      batch.clear();
    }
  }
  if (!batch.empty()) c.pipeline(batch);
  c.command({"SADD", reg::keys::known_instances, owner});
}

nlohmann::json evict(const endpoint& where, reg::janitor_mode mode, std::size_t devices,
                     std::size_t live_devices) {
  connection c({where, 2000ms, 120000ms, "bench"});
  c.command({"FLUSHALL"});
  populate(c, "dead", devices, 350000000000000ULL);
  // A live instance's entries share the registry: the scan mode must walk them too.
  populate(c, "live", live_devices, 370000000000000ULL);
  c.command({"SET", reg::keys::heartbeat("live"), "1"});
  reg::redis_registry_store janitor({where, 2000ms, 120000ms, "bench-janitor"}, "bench");
  std::string error;
  janitor.load_library(error);
  const double cpu0 = redis_cpu_seconds(c);
  const auto t0 = steady_clock::now();
  tgw::ports::store_failure failed;
  const auto report = janitor.janitor_pass(mode, 1000, failed);
  if (!report) error = failed.text();
  const double seconds = duration<double>(steady_clock::now() - t0).count();
  const double cpu = redis_cpu_seconds(c) - cpu0;
  return {{"mode", mode == reg::janitor_mode::scan ? "scan" : "reverse-index"},
          {"devices", devices},
          {"live_devices", live_devices},
          {"evicted", report ? report->evicted : 0},
          {"seconds", seconds},
          {"redis_cpu_seconds", cpu},
          {"left_in_registry",
           c.command({"HLEN", reg::keys::registry}).integer - static_cast<long long>(live_devices)},
          {"error", error}};
}

nlohmann::json storm(const endpoint& where, std::size_t devices) {
  connection c({where, 2000ms, 60000ms, "bench"});
  c.command({"FLUSHALL"});
  std::vector<std::string> imeis;
  for (std::size_t i = 0; i < devices; ++i) imeis.push_back(std::to_string(360000000000000ULL + i));
  // Everybody starts on A, then moves to B while A's stale sessions unregister: the
  // registry writes of a load balancer shifting a fleet from one instance to another.
  reg::redis_registry_store a({where, 2000ms, 60000ms, "bench-a"}, "A");
  reg::redis_registry_store b({where, 2000ms, 60000ms, "bench-b"}, "B");
  tgw::ports::store_failure error;
  for (const auto& imei : imeis) a.register_device(imei, error);
  const auto t0 = steady_clock::now();
  std::thread to_b([&] {
    tgw::ports::store_failure e;
    for (const auto& imei : imeis) b.register_device(imei, e);
  });
  std::thread from_a([&] {
    tgw::ports::store_failure e;
    for (const auto& imei : imeis) a.unregister_device(imei, e);
  });
  to_b.join();
  from_a.join();
  const double seconds = duration<double>(steady_clock::now() - t0).count();
  std::size_t on_b = 0;
  for (const auto& imei : imeis) on_b += c.command({"HGET", reg::keys::registry, imei}).text == "B";
  return {{"devices", devices},
          {"seconds", seconds},
          {"registrations_per_s", static_cast<double>(devices) / seconds},
          {"ops_per_s", 2.0 * static_cast<double>(devices) / seconds},
          {"owned_by_b_after", on_b}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: registry_bench PORT [DEVICES] [STORM_DEVICES]\n";
    return 2;
  }
  endpoint where;
  where.port = static_cast<std::uint16_t>(std::atoi(argv[1]));
  const std::size_t devices = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1'000'000;
  const std::size_t storm_devices = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10'000;
  const std::size_t live = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : devices;
  nlohmann::json out;
  out["reverse_index"] = evict(where, reg::janitor_mode::reverse_index, devices, live);
  out["scan"] = evict(where, reg::janitor_mode::scan, devices, live);
  out["reconnect_storm"] = storm(where, storm_devices);
  std::cout << out.dump() << '\n';
  return 0;
}
