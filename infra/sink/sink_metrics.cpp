#include "infra/sink/sink_metrics.hpp"

#include <utility>

#include "infra/exporter/process_metrics.hpp"
#include "infra/process/build_info.hpp"

namespace tgw::infra::sink {

std::vector<prometheus::MetricFamily> sink_metric_families(const sink_counters& c,
                                                           const std::string& group,
                                                           const std::string& consumer) {
  std::vector<prometheus::MetricFamily> out;
  const auto add = [&](const char* name, const char* help, prometheus::MetricType type,
                       double value, std::vector<prometheus::ClientMetric::Label> extra = {}) {
    if (out.empty() || out.back().name != name) out.push_back({name, help, type, {}});
    prometheus::ClientMetric m;
    m.label = {{"group", group}, {"consumer", consumer}};
    for (auto& l : extra) m.label.push_back(std::move(l));
    if (type == prometheus::MetricType::Counter)
      m.counter.value = value;
    else
      m.gauge.value = value;
    out.back().metric.push_back(std::move(m));
  };
  const auto count = [](const std::atomic<std::uint64_t>& a) {
    return static_cast<double>(a.load(std::memory_order_relaxed));
  };
  using type = prometheus::MetricType;
  add("teltonika_sink_records_total", "Rows committed into positions", type::Counter,
      count(c.records));
  add("teltonika_sink_duplicates_total",
      "Rows of batches delivered again that were committed before, skipped", type::Counter,
      count(c.duplicates));
  add("teltonika_sink_rejected_total",
      "Entries the sink cannot read, committed into rejected_entries", type::Counter,
      count(c.rejected));
  add("teltonika_sink_unknown_field_entries_total",
      "Entries with fields the sink does not know, kept in the extra column", type::Counter,
      count(c.unknown_fields));
  add("teltonika_sink_deleted_entries_total",
      "Pending entries trimmed from the stream before they were stored", type::Counter,
      count(c.deleted));
  add("teltonika_sink_batches_total", "Transactions committed", type::Counter, count(c.batches));
  add("teltonika_sink_claimed_total", "Entries taken over from a consumer that stopped",
      type::Counter, count(c.claimed));
  add("teltonika_sink_failures_total", "Failed operations, by store", type::Counter,
      count(c.postgres_failures), {{"store", "postgres"}});
  add("teltonika_sink_failures_total", "Failed operations, by store", type::Counter,
      count(c.redis_failures), {{"store", "redis"}});
  add("teltonika_sink_commit_seconds_total", "Time spent writing and committing batches",
      type::Counter, c.commit_seconds_sum.load(std::memory_order_relaxed));
  add("teltonika_sink_lag_seconds",
      "Seconds from storing to committing of the newest committed entry; 0 when caught up",
      type::Gauge, c.lag_seconds.load(std::memory_order_relaxed));
  add("teltonika_sink_up", "1 while the store answers", type::Gauge,
      c.postgres_up.load() ? 1.0 : 0.0, {{"store", "postgres"}});
  add("teltonika_sink_up", "1 while the store answers", type::Gauge, c.redis_up.load() ? 1.0 : 0.0,
      {{"store", "redis"}});
  prometheus::MetricFamily build{
      "teltonika_build_info", "Always 1; the labels name the build", type::Gauge, {}};
  prometheus::ClientMetric m;
  m.gauge.value = 1;
  m.label = {{"version", std::string(process::version())},
             {"commit", std::string(process::commit())}};
  build.metric.push_back(std::move(m));
  out.push_back(std::move(build));
  exporter::add_process_metrics(out);
  return out;
}

std::string sink_readiness(const sink_counters& c) {
  if (!c.redis_up.load()) return "Redis unreachable";
  if (!c.postgres_up.load()) return "PostgreSQL unreachable";
  return {};
}

}  // namespace tgw::infra::sink
