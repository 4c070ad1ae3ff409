#include "infra/exporter/metrics_server.hpp"

#include <utility>

#include <prometheus/text_serializer.h>

#include "infra/exporter/http_metrics.hpp"
#include "infra/http/server.hpp"

namespace tgw::infra::exporter {

struct metrics_server::impl {
  std::unique_ptr<http::server> server;
};

metrics_server::metrics_server(const std::string& address, collector collect, readiness_check ready,
                               http::server_limits limits, metric_labels labels)
    : impl_(std::make_unique<impl>()) {
  http::router routes;
  // The server's own counters are appended to what `collect` gives.
  auto stats = std::make_shared<http::server_stats>();
  routes.get("/metrics", [stats, collect = std::move(collect),
                          labels = std::move(labels)](const http::request&) {
    auto families = collect();
    add_http_metrics(families, *stats, "metrics", labels);
    http::response r = http::response::text(200, prometheus::TextSerializer().Serialize(families));
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  });
  routes.get("/healthz", [](const http::request&) { return http::response::text(200, "ok\n"); });
  routes.get("/readyz", [ready = std::move(ready)](const http::request&) {
    const std::string why = ready ? ready() : std::string();
    if (why.empty()) return http::response::text(200, "ready\n");
    return http::response::text(503, "not ready: " + why + "\n");
  });
  impl_->server = std::make_unique<http::server>(address, std::move(routes), limits, stats);
}

metrics_server::~metrics_server() = default;

std::uint16_t metrics_server::port() const noexcept {
  return impl_->server->port();
}

std::string cannot_serve_metrics(const std::exception& failure) {
  if (dynamic_cast<const http::listen_error*>(&failure) != nullptr)
    return std::string("cannot serve metrics: ") + failure.what() +
           "; choose another address with --metrics-addr ('' for none)";
  return std::string("cannot serve metrics on --metrics-addr: ") + failure.what();
}

}  // namespace tgw::infra::exporter
