#include "infra/api/api_service.hpp"

#include <mutex>
#include <sstream>

#include "infra/api/api_json.hpp"
#include "infra/api/event_cursor.hpp"
#include "infra/log/log_budget.hpp"

namespace tgw::infra::api {
namespace {

using http::request;
using http::responder;
using http::response;

/// One answer, from whichever thread has it first: the worker, the watcher, or the
/// deadline; later ones are dropped.
class once_answer {
 public:
  explicit once_answer(responder r) : r_(std::move(r)) {}
  void operator()(response a) {
    const std::lock_guard lock(mutex_);
    r_(std::move(a));
  }

 private:
  std::mutex mutex_;
  responder r_;
};

response unavailable(const std::string& why) {
  // Redis' own words go no further than this: a client learns that the store failed,
  // the operator reads why in this line (within a budget: clients choose how often
  // they ask while Redis is down).
  static infra::log_budget store_failure_log{"api store failure", infra::log_kind::refusal};
  store_failure_log.log(spdlog::level::warn,
                        "api: a request failed on the store: {}; check that Redis is "
                        "reachable and that the API's user may run its commands",
                        why);
  response r = error_response(503, "unavailable",
                              "the store (Redis) cannot be reached now; try again shortly");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

response overloaded() {
  response r = error_response(503, "overloaded",
                              "this API instance has more requests waiting than it takes "
                              "(--api-queue); try again shortly");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

// How long GET /v1/events waits for the reader to know the streams before a 503.
constexpr std::chrono::seconds events_ready_wait{10};

response events_unavailable() {
  response r = error_response(503, "unavailable",
                              "the event streams cannot be read now (Redis unreachable)");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

json cursor_or_null(const std::string& c) {
  return c.empty() ? json(nullptr) : json(c);
}

bool command_id_ok(std::string_view id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

/// What the routes share.
struct context {
  api_settings settings;
  api_parts parts;

  /// The caller, or the refusal already answered.
  std::optional<caller> admit(const request& r, scope needed, responder& done) const {
    response refusal;
    auto who = parts.access->admit(r, needed, refusal);
    if (!who) done(std::move(refusal));
    return who;
  }

  /// Runs `work` on a worker; 503 overloaded when the queue is full.
  void run(responder done, std::function<response(api_store&)> work) const {
    auto answer = std::make_shared<once_answer>(std::move(done));
    if (!parts.work->submit(
            [answer, work = std::move(work)](api_store& store) { (*answer)(work(store)); }))
      (*answer)(overloaded());
  }
};

void add_device_routes(http::router& routes, const std::shared_ptr<const context>& ctx) {
  routes.add("GET", "/v1/devices", [ctx](request r, responder done) {
    if (!ctx->admit(r, scope::read, done)) return;
    api_error e;
    const auto q = query_params::parse(r.query, {"limit", "cursor", "online", "silent_for"}, {}, e);
    device_query dq;
    dq.seen_within_ms = ctx->settings.seen_within_ms;
    std::optional<std::int64_t> limit;
    std::optional<std::optional<bool>> online;
    std::optional<std::optional<std::chrono::milliseconds>> silent;
    if (q && (limit = integer_param(*q, "limit", 1, 1000, 100, e)) &&
        (online = bool_param(*q, "online", e)) && (silent = duration_param(*q, "silent_for", e))) {
      dq.limit = static_cast<std::size_t>(*limit);
      dq.online = *online;
      if (*silent) dq.silent_for_ms = (*silent)->count();
      dq.after = q->one("cursor").value_or("");
      if (!dq.after.empty() && imei_problem(dq.after)) {
        e = {400, "bad_cursor", "cursor is the next_cursor of a previous page"};
      } else {
        return ctx->run(std::move(done), [dq](api_store& store) {
          std::string error;
          const auto page = store.devices(dq, error);
          if (!page) return unavailable(error);
          json list = json::array();
          for (const auto& d : page->devices) list.push_back(device_json(d));
          json j{{"devices", list}, {"next_cursor", cursor_or_null(page->next_cursor)}};
          put_time(j, "read", page->at_ms);
          return json_response(200, j);
        });
      }
    }
    done(error_response(e));
  });

  routes.add("GET", "/v1/devices/{imei}", [ctx](request r, responder done) {
    if (!ctx->admit(r, scope::read, done)) return;
    const std::string imei(*r.param("imei"));
    api_error e;
    if (const auto bad = imei_problem(imei)) return done(error_response(*bad));
    if (!query_params::parse(r.query, {}, {}, e)) return done(error_response(e));
    ctx->run(std::move(done), [imei](api_store& store) {
      std::string error;
      const auto d = store.device(imei, error);
      if (!d) return unavailable(error);
      if (!*d)
        return error_response(
            404, "unknown_device",
            "nothing is known of device " + imei + " (it never connected, and has no command)");
      return json_response(200, device_detail_json(**d));
    });
  });

  routes.add("GET", "/v1/devices/{imei}/records", [ctx](request r, responder done) {
    if (!ctx->admit(r, scope::read, done)) return;
    const std::string imei(*r.param("imei"));
    if (const auto bad = imei_problem(imei)) return done(error_response(*bad));
    api_error e;
    const auto q = query_params::parse(r.query, {"from", "to", "limit", "cursor", "names"}, {}, e);
    std::optional<std::int64_t> from, to, limit;
    std::optional<std::optional<bool>> names;
    if (q && (from = time_param(*q, "from", e)) && (to = time_param(*q, "to", e)) &&
        (limit = integer_param(*q, "limit", 1, 1000, 100, e)) &&
        (names = bool_param(*q, "names", e))) {
      record_query rq{imei,
                      *from,
                      *to,
                      static_cast<std::size_t>(*limit),
                      q->one("cursor").value_or(""),
                      names->value_or(false)};
      if (!rq.after.empty() && !is_stream_id(rq.after)) {
        e = {400, "bad_cursor", "cursor is the next_cursor of a previous page"};
      } else if (rq.to_ms != 0 && rq.to_ms < rq.from_ms) {
        e = {400, "bad_range", "to is before from"};
      } else {
        return ctx->run(std::move(done), [rq](api_store& store) {
          std::string error;
          const auto page = store.records(rq, error);
          if (!page) return unavailable(error);
          json list = json::array();
          for (const auto& rec : page->records) list.push_back(rec);
          return json_response(200, json{{"imei", rq.imei},
                                         {"records", list},
                                         {"next_cursor", cursor_or_null(page->next_cursor)}});
        });
      }
    }
    done(error_response(e));
  });
}

/// What a POST knows of its command while it waits: filled by the publish, read by the
/// answer that comes first.
struct pending_command {
  std::mutex mutex;
  std::string imei;
  commands::command_record record;
  bool waiting = false;
};

response command_answer(unsigned status, const std::string& imei,
                        const commands::command_record& r) {
  response out = json_response(status, command_json(imei, r));
  out.headers.emplace_back("Location", "/v1/commands/" + r.command_id);
  return out;
}

/// The POST's work on a worker: publishes, and answers unless the watcher will.
void publish(api_store& store, const command_submission& sub, pending_command& pending,
             once_answer& answer, command_waits* watcher) {
  std::string error;
  const auto result = store.submit(sub, error);
  const auto stop_waiting = [&] {
    if (pending.waiting && watcher != nullptr) watcher->cancel(sub.command_id);
  };
  if (!result) {
    stop_waiting();
    return answer(unavailable(error));
  }
  if (result->status == "unknown_device") {
    stop_waiting();
    return answer(error_response(404, "unknown_device",
                                 "device " + sub.imei +
                                     " never connected: nothing can deliver the command "
                                     "(queue_if_offline queues it for its first connection)"));
  }
  if (result->conflict) {
    stop_waiting();
    response r = error_response(409, "idempotency_key_reused",
                                "this Idempotency-Key was used for another request (command " +
                                    result->command_id + "); use a new key for a new command");
    r.headers.emplace_back("Location", "/v1/commands/" + result->command_id);
    return answer(std::move(r));
  }
  if (result->repeated) {
    // An earlier request with this key published the command: no second publish. Its
    // outcome may be known already, or still to come. The record names that command
    // before the wait moves to it: its outcome may be answered at once.
    {
      const std::lock_guard lock(pending.mutex);
      pending.record.command_id = result->command_id;
      pending.record.status = result->status.empty() ? "sent" : result->status;
    }
    const bool still_waiting =
        pending.waiting && watcher != nullptr && watcher->rekey(sub.command_id, result->command_id);
    const auto known = store.command(result->command_id, error);
    std::optional<command_view> view = known ? *known : std::nullopt;
    const std::lock_guard lock(pending.mutex);
    if (view) pending.record = view->record;
    if (still_waiting && pending.record.open()) return;  // the watcher answers
    if (still_waiting) watcher->cancel(sub.command_id);
    if (result->status == "offline" && pending.record.open()) {
      pending.record.status = "failed";
      pending.record.failure_reason = "socket_closed";
    }
    return answer(command_answer(pending.record.open() ? 202 : 200, sub.imei, pending.record));
  }
  const std::lock_guard lock(pending.mutex);
  pending.record.status = result->status;
  pending.record.instance = result->owner;
  if (result->status == "offline") {
    // Refused at once (the device is not connected, and nothing queues it): its end is
    // known, and journaled so.
    stop_waiting();
    pending.record.status = "failed";
    pending.record.failure_reason = "socket_closed";
    return answer(command_answer(200, sub.imei, pending.record));
  }
  if (!pending.waiting) return answer(command_answer(202, sub.imei, pending.record));
  // The watcher answers: with the outcome, or with 202 at the wait's end.
}

void add_command_routes(http::router& routes, const std::shared_ptr<const context>& ctx) {
  routes.add(
      "POST", "/v1/devices/{imei}/commands",
      [ctx](request r, responder done) {
        const auto who = ctx->admit(r, scope::command, done);
        if (!who) return;
        const std::string imei(*r.param("imei"));
        if (const auto bad = imei_problem(imei)) return done(error_response(*bad));
        api_error e;
        const auto q = query_params::parse(r.query, {"wait"}, {}, e);
        std::optional<std::int64_t> wait;
        if (!q || !(wait = integer_param(*q, "wait", 0, ctx->settings.max_wait_s, 0, e)))
          return done(error_response(e));
        const auto key = r.header("idempotency-key");
        if (key)
          if (const auto bad = idempotency_key_problem(*key)) return done(error_response(*bad));
        const auto body =
            parse_command_body(r.body, r.header("content-type"), ctx->settings.commands, e);
        if (!body) return done(error_response(e));

        command_submission sub;
        sub.imei = imei;
        sub.text = body->text;
        sub.codec = body->codec;
        sub.ttl = std::chrono::seconds{body->timeout_s};
        sub.queue_if_offline = body->queue_if_offline;
        sub.publisher = who->name;
        sub.command_id = ctx->parts.new_command_id();
        if (key) sub.idempotency_key = std::string(*key);
        sub.fingerprint = fingerprint(imei, *body);
        sub.idempotency_ttl = ctx->settings.idempotency_ttl;

        auto answer = std::make_shared<once_answer>(std::move(done));
        auto pending = std::make_shared<pending_command>();
        pending->imei = imei;
        pending->record = submitted_record(sub, "sent");
        if (*wait > 0) {
          auto* watcher = ctx->parts.watcher.get();
          const auto deadline = command_waits::clock::now() + std::chrono::seconds{*wait};
          // Registered before the publish: the outcome cannot come before it.
          const bool registered =
              watcher != nullptr &&
              watcher->expect(
                  sub.command_id, deadline,
                  [answer, pending](std::optional<commands::command_response> o) {
                    const std::lock_guard lock(pending->mutex);
                    if (o) {
                      fold_outcome(pending->record, *o);
                      return (*answer)(command_answer(200, pending->imei, pending->record));
                    }
                    (*answer)(command_answer(202, pending->imei, pending->record));
                  });
          if (!registered) {
            const bool full = watcher != nullptr && watcher->following();
            response busy = error_response(
                503, full ? "too_many_waits" : "unavailable",
                full ? "this API instance awaits " + std::to_string(ctx->settings.max_waits) +
                           " commands already (--max-waits); send without ?wait and poll "
                           "Location, or try again shortly"
                     : std::string("command outcomes cannot be awaited now (Redis "
                                   "unreachable); try again shortly"));
            busy.headers.emplace_back("Retry-After", "1");
            return (*answer)(std::move(busy));
          }
          pending->waiting = true;
        }
        auto watcher = ctx->parts.watcher;
        if (!ctx->parts.work->submit([answer, pending, sub, watcher](api_store& store) {
              publish(store, sub, *pending, *answer, watcher.get());
            })) {
          if (pending->waiting && watcher) watcher->cancel(sub.command_id);
          (*answer)(overloaded());
        }
      },
      http::route_options{command_route_deadline(ctx->settings)});

  routes.add("GET", "/v1/commands/{id}", [ctx](request r, responder done) {
    if (!ctx->admit(r, scope::read, done)) return;
    const std::string id(*r.param("id"));
    if (!command_id_ok(id))
      return done(error_response(400, "bad_command_id", "a command id is 32 lowercase hex digits"));
    api_error e;
    if (!query_params::parse(r.query, {}, {}, e)) return done(error_response(e));
    ctx->run(std::move(done), [id](api_store& store) {
      std::string error;
      const auto c = store.command(id, error);
      if (!c) return unavailable(error);
      if (!*c)
        return error_response(
            404, "unknown_command",
            "no command " + id + " was published through this API within the kept time");
      return json_response(200, command_json((*c)->imei, (*c)->record));
    });
  });

  routes.add("GET", "/v1/devices/{imei}/commands", [ctx](request r, responder done) {
    if (!ctx->admit(r, scope::read, done)) return;
    const std::string imei(*r.param("imei"));
    if (const auto bad = imei_problem(imei)) return done(error_response(*bad));
    api_error e;
    const auto q = query_params::parse(r.query, {"since"}, {}, e);
    std::optional<std::int64_t> since;
    if (!q || !(since = time_param(*q, "since", e))) return done(error_response(e));
    ctx->run(std::move(done), [imei, since = *since](api_store& store) {
      std::string error;
      const auto all = store.history(imei, since, error);
      if (!all) return unavailable(error);
      json list = json::array();
      for (const auto& c : *all) list.push_back(command_json(imei, c));
      return json_response(200, json{{"imei", imei}, {"commands", list}});
    });
  });
}

void add_event_routes(http::router& routes, const std::shared_ptr<const context>& ctx) {
  routes.add("GET", "/v1/events", [ctx](request r, responder done) {
    if (!ctx->admit(r, scope::events, done)) return;
    api_error e;
    const auto q = query_params::parse(r.query, {"imei", "types", "last_event_id"}, {"imei"}, e);
    if (!q) return done(error_response(e));
    event_filter filter;
    for (const std::string& imei : q->all("imei")) {
      if (const auto bad = imei_problem(imei)) return done(error_response(*bad));
      filter.imeis.insert(imei);
    }
    if (const auto types = q->one("types")) {
      const auto kinds = parse_event_kinds(*types, e);
      if (!kinds) return done(error_response(e));
      filter.kinds = *kinds;
    }
    // The hub answers every waiter before it goes: a plain pointer (a shared one in its
    // own waiters would keep it alive from its own thread).
    event_streams* hub = ctx->parts.events.get();
    if (hub == nullptr) return done(events_unavailable());
    const auto header = r.header("last-event-id");
    auto last = header ? std::optional<std::string>(std::string(*header)) : q->one("last_event_id");
    // Until the reader knows the streams (just started, or Redis back) the request waits
    // a little rather than being refused: an EventSource never retries a refusal.
    auto answer = std::make_shared<responder>(std::move(done));
    hub->when_ready(events_ready_wait, [hub, answer, filter = std::move(filter),
                                        last = std::move(last)](bool ready) mutable {
      if (!ready) return (*answer)(events_unavailable());
      api_error why;
      std::optional<event_cursor> from;
      if (last && !last->empty()) {
        from = parse_event_cursor(*last, hub->sources(), why);
        if (!from) return (*answer)(error_response(why));
      }
      response head;
      head.status = 200;
      head.content_type = "text/event-stream";
      head.headers = {{"Cache-Control", "no-store"}, {"X-Accel-Buffering", "no"}};
      // Admitted first, then the head: a refusal is still a plain error answer.
      if (!hub->admits(why)) return (*answer)(error_response(why));
      auto out = answer->stream(std::move(head));
      if (!hub->subscribe(out, std::move(filter), std::move(from), why))
        out->end("event: closing\ndata: " +
                 json{{"code", why.code}, {"message", why.message}}.dump() + "\n\n");
    });
  });
}

void add_service_routes(http::router& routes, const std::shared_ptr<const context>& ctx) {
  routes.get("/v1/openapi.json", [ctx](const request&) {
    response r;
    r.content_type = "application/json";
    r.body = ctx->settings.openapi;
    return r;
  });
  routes.get("/healthz", [](const request&) { return response::text(200, "ok\n"); });
  routes.add("GET", "/readyz", [ctx](request, responder done) {
    // Not ready until the events reader knows the streams and the watcher follows the
    // command outcomes: a balancer sends no client here before they can be served.
    if (ctx->parts.events && !ctx->parts.events->reading())
      return done(response::text(503, "not ready: the event streams cannot be read now\n"));
    if (ctx->parts.watcher && !ctx->parts.watcher->following())
      return done(response::text(503, "not ready: command outcomes cannot be awaited now\n"));
    ctx->run(std::move(done), [](api_store& store) {
      std::string error;
      if (store.reachable(error)) return response::text(200, "ready\n");
      return response::text(503, "not ready: Redis unreachable: " + error + "\n");
    });
  });
  routes.get("/metrics", [ctx](const request&) {
    if (!ctx->parts.metrics) return error_response(404, "not_found", "not found");
    response r = response::text(200, ctx->parts.metrics());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  });
}

}  // namespace

std::chrono::milliseconds command_route_deadline(const api_settings& settings) {
  return std::chrono::seconds{settings.max_wait_s} + std::chrono::seconds{15};
}

http::router api_routes(const api_settings& settings, api_parts parts) {
  auto ctx = std::make_shared<const context>(context{settings, std::move(parts)});
  http::router routes;
  routes.on_refusal([](unsigned status, std::string_view code, std::string_view message) {
    return error_response(status, code, message);
  });
  add_device_routes(routes, ctx);
  add_command_routes(routes, ctx);
  add_event_routes(routes, ctx);
  add_service_routes(routes, ctx);
  return routes;
}

}  // namespace tgw::infra::api
