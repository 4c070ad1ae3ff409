#include "infra/exporter/metrics_server.hpp"

#include <stdexcept>
#include <tuple>
#include <utility>

#include <CivetServer.h>
#include <prometheus/text_serializer.h>

namespace tgw::infra::exporter {
namespace {

// One civetweb handler: a fixed function from nothing to (status, content type, body).
class page final : public CivetHandler {
 public:
  using render = std::function<std::tuple<int, std::string, std::string>()>;
  explicit page(render r) : render_(std::move(r)) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    const auto [status, type, body] = render_();
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
              "Connection: close\r\n\r\n",
              status, status == 200 ? "OK" : "Service Unavailable", type.c_str(), body.size());
    mg_write(conn, body.data(), body.size());
    return true;
  }

 private:
  render render_;
};

}  // namespace

struct metrics_server::impl {
  std::unique_ptr<page> metrics_page;
  std::unique_ptr<page> health_page;
  std::unique_ptr<page> ready_page;
  std::unique_ptr<CivetServer> server;  // last: stopped first, before the pages go
};

metrics_server::metrics_server(const std::string& address, collector collect, readiness_check ready)
    : impl_(std::make_unique<impl>()) {
  impl_->metrics_page = std::make_unique<page>([collect = std::move(collect)] {
    return std::tuple<int, std::string, std::string>{
        200, "text/plain; version=0.0.4; charset=utf-8",
        prometheus::TextSerializer().Serialize(collect())};
  });
  impl_->health_page = std::make_unique<page>([] {
    return std::tuple<int, std::string, std::string>{200, "text/plain", "ok\n"};
  });
  impl_->ready_page = std::make_unique<page>([ready = std::move(ready)] {
    const std::string why = ready ? ready() : std::string();
    if (why.empty()) return std::tuple<int, std::string, std::string>{200, "text/plain", "ready\n"};
    return std::tuple<int, std::string, std::string>{503, "text/plain", "not ready: " + why + "\n"};
  });
  try {
    impl_->server = std::make_unique<CivetServer>(
        std::vector<std::string>{"listening_ports", address, "num_threads", "2"});
  } catch (const CivetException& e) {
    throw std::runtime_error(std::string("cannot listen: ") + e.what());
  }
  impl_->server->addHandler("/metrics", impl_->metrics_page.get());
  impl_->server->addHandler("/healthz", impl_->health_page.get());
  impl_->server->addHandler("/readyz", impl_->ready_page.get());
}

metrics_server::~metrics_server() = default;

}  // namespace tgw::infra::exporter
