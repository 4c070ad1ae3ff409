#include "infra/exporter/metrics_endpoint.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "codecs/codec_id.hpp"
#include "codecs/errc.hpp"
#include "infra/exporter/metrics_server.hpp"
#include "infra/exporter/process_metrics.hpp"
#include "infra/process/build_info.hpp"

namespace tgw::infra::exporter {
namespace {

// Every errc a frame can be refused with, by name; `ok` and `need_more` never count.
constexpr codecs::errc last_errc = codecs::errc::value_out_of_range;

template <std::size_t N>
prometheus::MetricFamily histogram_family(const char* name, const char* help,
                                          const metrics::atomic_histogram<N>& h,
                                          const std::string& instance) {
  prometheus::MetricFamily f{name, help, prometheus::MetricType::Histogram, {}};
  prometheus::ClientMetric m;
  m.label.push_back({"instance_id", instance});
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < N; ++i) {
    cumulative += h.bucket(i);
    m.histogram.bucket.push_back({cumulative, h.bounds()[i]});
  }
  cumulative += h.bucket(N);
  m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = h.sum();
  f.metric.push_back(std::move(m));
  return f;
}

class counters_collector final : public prometheus::Collectable {
 public:
  counters_collector(std::shared_ptr<const metrics::gateway_counters> c, live_gauges g,
                     std::string id, readiness_verdict ready)
      : c_(std::move(c)), g_(std::move(g)), instance_(std::move(id)), ready_(std::move(ready)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    auto counter = [&](const char* name, const char* help,
                       std::initializer_list<std::pair<const char*, double>> by_label,
                       const char* label_name) {
      prometheus::MetricFamily f{name, help, prometheus::MetricType::Counter, {}};
      for (const auto& [label, value] : by_label) {
        prometheus::ClientMetric m;
        m.label.push_back({"instance_id", instance_});
        if (label_name != nullptr) m.label.push_back({label_name, label});
        m.counter.value = value;
        f.metric.push_back(std::move(m));
      }
      out.push_back(std::move(f));
    };
    auto gauge = [&](const char* name, const char* help, double value) {
      prometheus::MetricFamily f{name, help, prometheus::MetricType::Gauge, {}};
      prometheus::ClientMetric m;
      m.label.push_back({"instance_id", instance_});
      m.gauge.value = value;
      f.metric.push_back(std::move(m));
      out.push_back(std::move(f));
    };
    auto v = [](const auto& a) { return static_cast<double>(a.load(std::memory_order_relaxed)); };
    counter("teltonika_handshakes_total", "IMEI handshakes by result",
            {{"accepted", v(c_->handshakes_accepted)}, {"rejected", v(c_->handshakes_rejected)}},
            "result");
    counter("teltonika_frames_total", "Frames received by kind",
            {{"avl", v(c_->frames_avl)},
             {"command", v(c_->frames_command)},
             {"keepalive", v(c_->keepalives) + (g_.keepalives ? g_.keepalives() : 0.0)}},
            "kind");
    {
      prometheus::MetricFamily f{"teltonika_refused_total",
                                 "What peers were refused, by the budget they spent "
                                 "(docs/OPERATIONS.md, \"Hostile input\")",
                                 prometheus::MetricType::Counter,
                                 {}};
      for (std::size_t i = 0; i < metrics::refusal_names.size(); ++i) {
        prometheus::ClientMetric m;
        m.label.push_back({"instance_id", instance_});
        m.label.push_back({"reason", std::string(metrics::refusal_names[i])});
        m.counter.value = static_cast<double>(c_->refusals[static_cast<metrics::refusal>(i)]);
        f.metric.push_back(std::move(m));
      }
      out.push_back(std::move(f));
    }
    counter("teltonika_frames_rejected_total", "AVL frames refused (bad CRC, malformed)",
            {{"", v(c_->frames_rejected)}}, nullptr);
    {
      prometheus::MetricFamily f{"teltonika_frames_by_codec_total",
                                 "Frames received by codec",
                                 prometheus::MetricType::Counter,
                                 {}};
      for (const std::uint8_t id :
           std::array<std::uint8_t, 7>{0x08, 0x8E, 0x10, 0x0C, 0x0D, 0x0E, 0x0F}) {
        prometheus::ClientMetric m;
        m.label.push_back({"instance_id", instance_});
        m.label.push_back({"codec", std::string(codecs::codec_name(id))});
        m.counter.value = v(c_->frames_by_codec[id]);
        f.metric.push_back(std::move(m));
      }
      out.push_back(std::move(f));
    }
    {
      // Decode errors are counted by the sessions, framing errors (which close the
      // connection) by the TCP server; both land here under the error's name.
      prometheus::MetricFamily f{"teltonika_frame_errors_total",
                                 "Frames refused, by error (decode and framing)",
                                 prometheus::MetricType::Counter,
                                 {}};
      for (std::size_t e = static_cast<std::size_t>(codecs::errc::bad_preamble);
           e <= static_cast<std::size_t>(last_errc); ++e) {
        prometheus::ClientMetric m;
        m.label.push_back({"instance_id", instance_});
        m.label.push_back({"error", std::string(codecs::to_string(static_cast<codecs::errc>(e)))});
        m.counter.value =
            v(c_->frames_rejected_by_error[e]) + (g_.framing_errors ? g_.framing_errors(e) : 0.0);
        f.metric.push_back(std::move(m));
      }
      out.push_back(std::move(f));
    }
    out.push_back(histogram_family("teltonika_ack_latency_seconds",
                                   "From an AVL frame reaching its session to its ACK, seconds",
                                   c_->ack_latency, instance_));
    out.push_back(histogram_family("teltonika_writer_batch_size",
                                   "Writes (packets and events) per telemetry writer round trip",
                                   c_->writer_batch_size, instance_));
    // The registry's failures are teltonika_registry_failures_total (a name other
    // systems depend on), so they are not repeated here under a second name.
    counter("teltonika_redis_errors_total", "Redis round trips that failed, by component",
            {{"telemetry_writer", v(c_->writer_redis_errors)},
             {"command_responder", v(c_->command_redis_errors)}},
            "component");
    counter("teltonika_commands_total", "Outbound commands by stage",
            {{"received", v(c_->commands_received)},
             {"refused", v(c_->commands_refused)},
             {"written", v(c_->commands_written)},
             {"resolved", v(c_->commands_resolved)},
             {"adopted_from_dead_instance", v(c_->commands_adopted)}},
            "stage");
    {
      prometheus::MetricFamily f{"teltonika_command_outcomes_total",
                                 "Commands this instance answered, by outcome: the status of a "
                                 "success, the reason of a failure",
                                 prometheus::MetricType::Counter,
                                 {}};
      for (std::size_t i = 0; i < metrics::command_outcome_names.size(); ++i) {
        prometheus::ClientMetric m;
        m.label.push_back({"instance_id", instance_});
        m.label.push_back({"outcome", std::string(metrics::command_outcome_names[i])});
        m.counter.value = v(c_->command_outcomes[i]);
        f.metric.push_back(std::move(m));
      }
      out.push_back(std::move(f));
    }
    counter("teltonika_redis_reconnects_total",
            "Telemetry writers that found Redis reachable again after an outage",
            {{"", v(c_->writer_reconnects)}}, nullptr);
    counter("teltonika_records_persisted_total", "AVL records stored and ACKed",
            {{"", v(c_->records_persisted)}}, nullptr);
    counter("teltonika_packets_duplicate_total", "Resent packets ACKed without storing again",
            {{"", v(c_->packets_duplicate)}}, nullptr);
    counter("teltonika_persist_failures_total",
            "Packets not ACKed: Redis down or refusing the write (redis), or fewer replicas "
            "confirmed it than --ack-replicas asks (replicas)",
            {{"redis", v(c_->persist_failures)}, {"replicas", v(c_->persist_failures_replicas)}},
            "reason");
    if (g_.persist_stall) {
      const auto [reason, seconds] = g_.persist_stall();
      prometheus::MetricFamily f{"teltonika_persist_stall_seconds",
                                 "How long every persist attempt has failed (0: persisting "
                                 "works); /readyz is 503 from --readiness-window-ms on",
                                 prometheus::MetricType::Gauge,
                                 {}};
      prometheus::ClientMetric m;
      m.label.push_back({"instance_id", instance_});
      m.label.push_back({"reason", reason});
      m.gauge.value = seconds;
      f.metric.push_back(std::move(m));
      out.push_back(std::move(f));
    }
    if (ready_) {
      const readiness verdict = ready_();
      prometheus::MetricFamily f{
          "teltonika_ready",
          "1 while /readyz is 200; 0 with the reason it is 503 (not_listening, "
          "persist_<cause>, no_heartbeat, heartbeat_failed, heartbeat_stale)",
          prometheus::MetricType::Gauge,
          {}};
      prometheus::ClientMetric m;
      m.label.push_back({"instance_id", instance_});
      m.label.push_back({"reason", verdict.reason});
      m.gauge.value = verdict.detail.empty() ? 1.0 : 0.0;
      f.metric.push_back(std::move(m));
      out.push_back(std::move(f));
    }
    counter("teltonika_capture_bytes_total",
            "Device and gateway payload bytes written to capture files",
            {{"", v(c_->capture_bytes_written)}}, nullptr);
    counter("teltonika_capture_dropped_bytes_total",
            "Payload bytes not captured because the capture queue was full or a write failed",
            {{"", v(c_->capture_dropped)}}, nullptr);
    counter("teltonika_acks_total", "AVL ACKs sent", {{"", v(c_->acks_sent)}}, nullptr);
    gauge("teltonika_sessions", "Device session actors alive", v(c_->sessions_open));
    counter("teltonika_registry_failures_total",
            "Registry writes that failed (Redis down); repaired when it returns",
            {{"", v(c_->registry_failures)}}, nullptr);
    counter("teltonika_registry_janitor_evicted_total",
            "Registry entries of dead instances this instance's janitor deleted",
            {{"", v(c_->janitor_evicted)}}, nullptr);
    counter("teltonika_registry_janitor_passes_total", "Janitor passes run",
            {{"", v(c_->janitor_passes)}}, nullptr);
    gauge("teltonika_registry_devices", "Devices this instance holds in the registry",
          v(c_->registry_held));
    if (g_.connections_open)
      gauge("teltonika_connections", "Open device TCP connections", g_.connections_open());
    auto labelled_counter = [&](const char* name, const char* help,
                                const live_gauges::labelled& samples, const char* label_name) {
      prometheus::MetricFamily f{name, help, prometheus::MetricType::Counter, {}};
      for (const auto& [label, value] : samples) {
        prometheus::ClientMetric m;
        m.label.push_back({"instance_id", instance_});
        m.label.push_back({label_name, label});
        m.counter.value = value;
        f.metric.push_back(std::move(m));
      }
      out.push_back(std::move(f));
    };
    if (g_.connection_results)
      labelled_counter("teltonika_connections_total", "Device TCP connections by outcome",
                       g_.connection_results(), "result");
    if (g_.tls_handshakes)
      labelled_counter("teltonika_tls_handshakes_total", "TLS handshakes on the device port",
                       g_.tls_handshakes(), "result");
    if (g_.tls_handshakes_running)
      gauge("teltonika_tls_handshakes_running",
            "TLS handshakes in progress (at most --tls-handshakes)", g_.tls_handshakes_running());
    if (g_.tls_handshakes_waiting)
      gauge("teltonika_tls_handshakes_waiting",
            "Connections waiting for a TLS handshake slot (--tls-handshakes)",
            g_.tls_handshakes_waiting());
    if (g_.tls_certificate_expiry)
      gauge("teltonika_tls_certificate_expiry_timestamp_seconds",
            "When the device port's certificate in force expires", g_.tls_certificate_expiry());
    if (g_.handshakes_in_progress)
      gauge("teltonika_handshakes_in_progress",
            "Connections still in their handshake (PROXY, TLS, IMEI), over limited addresses",
            g_.handshakes_in_progress());
    auto labelled_gauge = [&](const char* name, const char* help,
                              const live_gauges::labelled& samples, const char* label_name) {
      prometheus::MetricFamily f{name, help, prometheus::MetricType::Gauge, {}};
      for (const auto& [label, value] : samples) {
        prometheus::ClientMetric m;
        m.label.push_back({"instance_id", instance_});
        m.label.push_back({label_name, label});
        m.gauge.value = value;
        f.metric.push_back(std::move(m));
      }
      out.push_back(std::move(f));
    };
    if (g_.telemetry_stream_length)
      gauge("teltonika_telemetry_stream_entries",
            "Entries in telemetry:records at the last retention pass",
            g_.telemetry_stream_length());
    if (g_.telemetry_stream_bytes)
      gauge("teltonika_telemetry_stream_bytes",
            "Redis memory telemetry:records takes at the last retention pass (sampled)",
            g_.telemetry_stream_bytes());
    if (g_.telemetry_trimmed)
      counter("teltonika_telemetry_trimmed_total",
              "Telemetry entries this instance trimmed after every consumer group acknowledged "
              "them",
              {{"", g_.telemetry_trimmed()}}, nullptr);
    if (g_.consumer_lag_entries)
      labelled_gauge("teltonika_telemetry_consumer_lag_entries",
                     "Telemetry entries not yet delivered to the consumer group",
                     g_.consumer_lag_entries(), "group");
    if (g_.consumer_pending_entries)
      labelled_gauge("teltonika_telemetry_consumer_pending_entries",
                     "Telemetry entries delivered to the group and not acknowledged",
                     g_.consumer_pending_entries(), "group");
    if (g_.consumer_lag_seconds)
      labelled_gauge("teltonika_telemetry_consumer_lag_seconds",
                     "Age of the oldest telemetry entry the group has not acknowledged (0: none)",
                     g_.consumer_lag_seconds(), "group");
    counter("teltonika_allowlist_disconnects_total",
            "Devices disconnected because a reloaded allowlist no longer admits them",
            {{"", v(c_->allowlist_disconnects)}}, nullptr);
    counter("teltonika_allowlist_reload_failures_total",
            "Allowlist reloads that failed; the list in force stayed",
            {{"", v(c_->allowlist_reload_failures)}}, nullptr);
    gauge("teltonika_allowlist_imeis", "IMEIs in the allowlist in force (0: every device admitted)",
          v(c_->allowlist_size));
    gauge("teltonika_build_info", "Always 1; the labels name the build", 1.0);
    out.back().metric.back().label.push_back({"version", std::string(process::version())});
    out.back().metric.back().label.push_back({"commit", std::string(process::commit())});
    add_process_metrics(out);
    return out;
  }

 private:
  std::shared_ptr<const metrics::gateway_counters> c_;
  live_gauges g_;
  std::string instance_;
  readiness_verdict ready_;
};

}  // namespace

struct metrics_endpoint::impl {
  std::shared_ptr<counters_collector> collector;
  std::unique_ptr<metrics_server> server;
};

metrics_endpoint::metrics_endpoint(const std::string& address,
                                   std::shared_ptr<const metrics::gateway_counters> counters,
                                   live_gauges gauges, std::string instance_id,
                                   readiness_verdict ready, http::server_limits limits)
    : impl_(std::make_unique<impl>()) {
  metric_labels labels = {{"instance_id", instance_id}};
  readiness_check why;
  if (ready) why = [ready] { return ready().detail; };
  impl_->collector = std::make_shared<counters_collector>(std::move(counters), std::move(gauges),
                                                          std::move(instance_id), std::move(ready));
  impl_->server = std::make_unique<metrics_server>(
      address, [collector = impl_->collector] { return collector->Collect(); }, std::move(why),
      limits, std::move(labels));
}

metrics_endpoint::~metrics_endpoint() = default;

}  // namespace tgw::infra::exporter
