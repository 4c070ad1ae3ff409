#include "infra/exporter/http_metrics.hpp"

#include <initializer_list>
#include <limits>

namespace tgw::infra::exporter {

void add_http_metrics(std::vector<prometheus::MetricFamily>& out, const http::server_stats& stats,
                      const std::string& endpoint,
                      const std::vector<std::pair<std::string, std::string>>& labels) {
  using http::close_reason;
  const auto family = [&](const char* name, const char* help, prometheus::MetricType type) {
    out.push_back({name, help, type, {}});
  };
  // One sample of the last family: the labels, then `label_name`=`label` if named.
  const auto sample = [&](double value, const char* label_name = nullptr,
                          std::string_view label = {}) {
    prometheus::ClientMetric m;
    for (const auto& [name, text] : labels) m.label.push_back({name, text});
    m.label.push_back({"endpoint", endpoint});
    if (label_name != nullptr) m.label.push_back({label_name, std::string(label)});
    if (out.back().type == prometheus::MetricType::Gauge)
      m.gauge.value = value;
    else
      m.counter.value = value;
    out.back().metric.push_back(std::move(m));
  };
  const auto v = [](const auto& a) {
    return static_cast<double>(a.load(std::memory_order_relaxed));
  };

  family("teltonika_http_connections", "Open connections to the HTTP endpoint",
         prometheus::MetricType::Gauge);
  sample(v(stats.open));
  family("teltonika_http_connections_total",
         "Connections to the HTTP endpoint by outcome: accepted, or closed on accept over "
         "a connection cap",
         prometheus::MetricType::Counter);
  sample(v(stats.accepted), "result", "accepted");
  for (const close_reason r :
       {close_reason::refused_max_connections, close_reason::refused_address_limit})
    sample(static_cast<double>(stats.closed_for(r)), "result", http::to_string(r));
  family("teltonika_http_closed_total",
         "Connections the HTTP endpoint closed: a deadline passed, or a request over a cap "
         "or not HTTP",
         prometheus::MetricType::Counter);
  for (const close_reason r :
       {close_reason::header_timeout, close_reason::request_timeout, close_reason::idle_timeout,
        close_reason::header_too_large, close_reason::body_too_large, close_reason::malformed,
        close_reason::tls_handshake, close_reason::stream_stalled})
    sample(static_cast<double>(stats.closed_for(r)), "reason", http::to_string(r));
  family("teltonika_http_requests_total", "Requests the HTTP endpoint read whole",
         prometheus::MetricType::Counter);
  sample(v(stats.requests));
  family("teltonika_http_handler_failures_total",
         "Requests answered 500 because their handler failed", prometheus::MetricType::Counter);
  sample(v(stats.handler_failures));
  family("teltonika_http_accept_failures_total",
         "accept() failures of the HTTP endpoint (out of descriptors); accepting resumes "
         "after 100 ms",
         prometheus::MetricType::Counter);
  sample(v(stats.accept_failures));

  // Per route: answers by status, and how long they took (to the head, for a stream).
  family("teltonika_http_responses_total",
         "Answers of the HTTP endpoint by route and status (route \"unmatched\": no route "
         "took the request)",
         prometheus::MetricType::Counter);
  for (const auto& route : stats.routes) {
    for (std::size_t i = 0; i < route->by_status.size(); ++i) {
      const auto n = route->by_status[i].load(std::memory_order_relaxed);
      if (n == 0) continue;
      prometheus::ClientMetric m;
      for (const auto& [name, text] : labels) m.label.push_back({name, text});
      m.label.push_back({"endpoint", endpoint});
      m.label.push_back({"method", route->method});
      m.label.push_back({"route", route->pattern});
      m.label.push_back({"status", http::route_stats::status_label(i)});
      m.counter.value = static_cast<double>(n);
      out.back().metric.push_back(std::move(m));
    }
  }
  family("teltonika_http_request_duration_seconds",
         "From a request read whole to its answer handed to the socket, by route",
         prometheus::MetricType::Histogram);
  for (const auto& route : stats.routes) {
    prometheus::ClientMetric m;
    for (const auto& [name, text] : labels) m.label.push_back({name, text});
    m.label.push_back({"endpoint", endpoint});
    m.label.push_back({"method", route->method});
    m.label.push_back({"route", route->pattern});
    const auto& h = route->latency;
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < h.bounds().size(); ++i) {
      cumulative += h.bucket(i);
      m.histogram.bucket.push_back({cumulative, h.bounds()[i]});
    }
    cumulative += h.bucket(h.bounds().size());
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = h.sum();
    out.back().metric.push_back(std::move(m));
  }
}

}  // namespace tgw::infra::exporter
