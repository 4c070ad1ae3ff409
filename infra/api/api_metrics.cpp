#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include "infra/api/api_service.hpp"
#include "infra/exporter/http_metrics.hpp"

namespace tgw::infra::api {

std::string api_metrics_text(const api_settings& settings, const api_parts& parts,
                             const http::server_stats& stats) {
  std::vector<prometheus::MetricFamily> families;
  const std::vector<std::pair<std::string, std::string>> labels = {{"api", settings.name}};
  const auto one = [&](const char* name, const char* help, double value,
                       prometheus::MetricType type) {
    prometheus::MetricFamily f{name, help, type, {}};
    prometheus::ClientMetric m;
    for (const auto& [k, v] : labels) m.label.push_back({k, v});
    if (type == prometheus::MetricType::Counter)
      m.counter.value = value;
    else
      m.gauge.value = value;
    f.metric.push_back(std::move(m));
    families.push_back(std::move(f));
  };
  using prometheus::MetricType;
  const auto* hub = parts.events.get();
  const auto* waits = parts.watcher.get();
  const auto count = [](auto n) { return static_cast<double>(n); };
  one("teltonika_api_event_clients", "Clients following /v1/events",
      hub != nullptr ? count(hub->clients()) : 0, MetricType::Gauge);
  one("teltonika_api_events_sent_total", "Events written to /v1/events clients",
      hub != nullptr ? count(hub->events_sent()) : 0, MetricType::Counter);
  one("teltonika_api_event_clients_cut_total",
      "Event clients cut off for reading slower than events came",
      hub != nullptr ? count(hub->clients_cut()) : 0, MetricType::Counter);
  one("teltonika_api_command_waits", "Requests awaiting a command's outcome (?wait)",
      waits != nullptr ? count(waits->waiting()) : 0, MetricType::Gauge);
  one("teltonika_api_command_outcomes_total", "Outcomes handed to awaiting requests",
      waits != nullptr ? count(waits->outcomes_delivered()) : 0, MetricType::Counter);
  one("teltonika_api_work_queued", "Requests waiting for a worker", count(parts.work->queued()),
      MetricType::Gauge);
  one("teltonika_api_tokens", "Tokens in force", count(parts.access->token_count()),
      MetricType::Gauge);
  exporter::add_http_metrics(families, stats, "api", labels);
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace tgw::infra::api
