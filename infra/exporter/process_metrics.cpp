#include "infra/exporter/process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace tgw::infra::exporter {

void add_process_metrics(std::vector<prometheus::MetricFamily>& out) {
  auto plain = [&](const char* name, const char* help, prometheus::MetricType type, double value) {
    prometheus::MetricFamily f{name, help, type, {}};
    prometheus::ClientMetric m;
    if (type == prometheus::MetricType::Counter)
      m.counter.value = value;
    else
      m.gauge.value = value;
    f.metric.push_back(std::move(m));
    out.push_back(std::move(f));
  };
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++fds;
  plain("process_open_fds", "Open file descriptors", prometheus::MetricType::Gauge, fds);
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0)
    plain("process_max_fds", "Maximum open file descriptors", prometheus::MetricType::Gauge,
          static_cast<double>(files.rlim_cur));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return;
  // Fields after the command name, which may hold spaces: state is field 3.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::vector<std::string> f{std::istream_iterator<std::string>(rest), {}};
  if (f.size() < 22) return;
  const double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;  // utime + stime
  plain("process_cpu_seconds_total", "User and system CPU time spent, seconds",
        prometheus::MetricType::Counter, cpu);
  plain("process_virtual_memory_bytes", "Virtual memory size, bytes", prometheus::MetricType::Gauge,
        std::stod(f[20]));
  plain("process_resident_memory_bytes", "Resident memory size, bytes",
        prometheus::MetricType::Gauge, std::stod(f[21]) * page);
  std::ifstream uptime("/proc/uptime");
  double up = 0;
  uptime >> up;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  plain("process_start_time_seconds", "Start time of the process, seconds since the epoch",
        prometheus::MetricType::Gauge, now - up + std::stod(f[19]) / ticks);
}

}  // namespace tgw::infra::exporter
