#include "infra/api/api_server.hpp"

#include "infra/api/event_hub.hpp"
#include "infra/api/openapi_document.hpp"
#include "infra/api/outcome_watcher.hpp"
#include "infra/api/redis_api_store.hpp"
#include "infra/http/server.hpp"
#include "infra/net/asio.hpp"

namespace tgw::infra::api {
namespace {

bool loopback(const std::string& address) {
  const auto colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto a = net::asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

}  // namespace

struct api_server::parts_t {
  std::shared_ptr<access_control> access;
  std::shared_ptr<net::tls_context_source> tls;
  std::shared_ptr<work_pool> work;
  std::shared_ptr<outcome_watcher> watcher;
  std::shared_ptr<event_hub> events;
  std::shared_ptr<http::server_stats> stats;
  std::unique_ptr<http::server> server;
};

std::string settings_problem(const api_server_settings& s) {
  if (s.no_auth && !s.tokens_file.empty())
    return "--no-auth and --tokens exclude each other: either every request is let in, or "
           "only those with a token";
  if (s.no_auth && !loopback(s.listen))
    return "--no-auth lets anyone in: it is refused on " + s.listen +
           ", which is not a loopback address; create a token with tgw api token add and "
           "pass --tokens FILE";
  if (!s.no_auth && s.tokens_file.empty())
    return "no tokens file: create one with `tgw api token add NAME --scopes read,command,"
           "events --tokens FILE` and pass --tokens FILE (or --no-auth on a loopback address)";
  if (s.tls_cert.empty() != s.tls_key.empty())
    return "--tls-cert and --tls-key go together: the certificate and its private key";
  return {};
}

std::unique_ptr<api_server> api_server::start(const api_server_settings& settings,
                                              const redis::connection::options& redis,
                                              const telemetry::io_dictionary* names,
                                              std::string& error) {
  error = settings_problem(settings);
  if (!error.empty()) return nullptr;
  std::unique_ptr<api_server> out(new api_server());
  auto& p = *(out->parts_ = std::make_unique<parts_t>());
  p.access = std::make_shared<access_control>(settings.tokens_file, settings.no_auth,
                                              settings.rate_per_token, settings.rate_burst);
  if (!p.access->reload(error)) return nullptr;
  if (!settings.tls_cert.empty()) {
    net::tls_settings t;
    t.cert_file = settings.tls_cert;
    t.key_file = settings.tls_key;
    auto first = net::tls_server_context::load(t, error);
    if (!first) {
      error = "--tls-cert/--tls-key: " + error;
      return nullptr;
    }
    p.tls = std::make_shared<net::tls_context_source>(t, std::move(first));
  }
  p.work = std::make_shared<work_pool>(settings.api.workers, settings.api.max_queued, [&] {
    return std::make_unique<redis_api_store>(redis, names);
  });
  p.watcher = std::make_shared<outcome_watcher>(redis, settings.api.max_waits);
  p.events = std::make_shared<event_hub>(redis, event_hub_limits{settings.max_event_clients});
  p.stats = std::make_shared<http::server_stats>();
  api_settings api = settings.api;
  if (api.openapi.empty()) api.openapi = std::string(openapi_document());
  if (api.name.empty()) api.name = settings.listen;
  api_parts parts{p.work, p.watcher, p.events, p.access, commands::new_command_id, {}};
  parts.metrics = [api, parts, stats = p.stats] { return api_metrics_text(api, parts, *stats); };
  http::router routes = api_routes(api, parts);
  try {
    p.server = std::make_unique<http::server>(settings.listen, std::move(routes), settings.limits,
                                              p.stats, settings.io_threads, p.tls);
  } catch (const http::listen_error& e) {
    error =
        std::string("cannot serve the API: ") + e.what() + "; choose another address with --listen";
    return nullptr;
  }
  return out;
}

api_server::~api_server() {
  if (!parts_) return;
  // The listener first, so that no handler runs while what it reaches goes.
  parts_->server.reset();
  parts_->events.reset();
  parts_->watcher.reset();
  parts_->work.reset();
}

std::uint16_t api_server::port() const noexcept {
  return parts_->server->port();
}

bool api_server::reload(std::string& report) {
  bool ok = true;
  std::string error;
  if (parts_->access->reload(error)) {
    report = "tokens: " + std::to_string(parts_->access->token_count()) + " in force";
  } else {
    report = "tokens: " + error + "; the tokens in force stay";
    ok = false;
  }
  if (parts_->tls) {
    std::string tls_report;
    ok = parts_->tls->reload(tls_report) && ok;
    report += "\n" + tls_report;
  }
  return ok;
}

}  // namespace tgw::infra::api
