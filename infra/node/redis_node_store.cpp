#include "infra/node/redis_node_store.hpp"

#include <spdlog/spdlog.h>

#include "infra/node/node_keys.hpp"
#include "infra/node/node_library.hpp"
#include "infra/redis/failure_cause.hpp"

namespace tgw::infra::node {
namespace {

std::string ms(std::chrono::milliseconds d) {
  return std::to_string(d.count());
}

}  // namespace

redis_node_store::redis_node_store(redis::connection::options where, node_timing timing,
                                   bool record_handled)
    : prefix_(where.where.via_cluster() ? cluster_tag : ""),
      conn_(std::move(where)),
      library_(conn_, node_library_source()),
      timing_(timing),
      record_handled_(record_handled) {}

bool redis_node_store::load_library() {
  std::string error;
  if (library_.load(error)) return true;
  last_error_ = "FUNCTION LOAD: " + error;
  last_failure_ = redis::store_failure_of_text(error, node_library_source(), "FUNCTION LOAD");
  return false;
}

redis::value redis_node_store::call(std::vector<std::string> argv) {
  const redis::value v = library_.call(argv);
  if (v.is_error()) {
    last_error_ = argv[1] + ": " + v.text;
    last_failure_ = redis::store_failure_of(v.failure, v.text, node_library_source(), argv[1]);
  } else {
    last_error_.clear();
    last_failure_ = {};
  }
  return v;
}

std::optional<membership_view> redis_node_store::view_of(const redis::value& v) {
  if (!v.is_array() || v.elements.size() != 5) {
    if (last_error_.empty()) {
      last_error_ = "unexpected reply shape";
      last_failure_ = redis::store_failure_of_text(last_error_);
    }
    return std::nullopt;
  }
  membership_view view;
  view.emitter = v.elements[0].text;
  view.epoch = v.elements[1].as_int().value_or(0);
  view.removed = v.elements[2].as_int().value_or(0);
  view.returned = v.elements[3].as_int().value_or(0);
  view.rejoined = v.elements[4].as_int().value_or(0) != 0;
  return view;
}

std::optional<membership_view> redis_node_store::join(const std::string& id) {
  return view_of(call({"FCALL", "tgw_node_join", "6", key(keys::list), key(keys::ids),
                       key(keys::emitter), key(keys::epoch), key(keys::queue), key(keys::sequence),
                       id, ms(timing_.key_ttl), key(keys::processing_prefix)}));
}

std::optional<membership_view> redis_node_store::health_check(const std::string& id) {
  return view_of(
      call({"FCALL", "tgw_node_health", "7", key(keys::list), key(keys::ids), key(keys::emitter),
            key(keys::epoch), key(keys::queue), key(keys::sequence), key(keys::departed), id,
            ms(timing_.inactive_after), ms(timing_.key_ttl), key(keys::processing_prefix)}));
}

emit_result redis_node_store::emit(const std::string& id, std::int64_t epoch, int count) {
  const redis::value v =
      call({"FCALL", "tgw_node_emit", "5", key(keys::list), key(keys::emitter), key(keys::epoch),
            key(keys::queue), key(keys::sequence), id, std::to_string(epoch), std::to_string(count),
            ms(timing_.key_ttl), std::to_string(timing_.max_messages),
            std::to_string(timing_.queue_limit)});
  emit_result r;
  if (!v.is_array() || v.elements.size() != 3) return r;
  switch (v.elements[0].as_int().value_or(0)) {
    case 1:
      r.outcome = emit_result::status::emitted;
      break;
    case 2:
      r.outcome = emit_result::status::exhausted;
      break;
    case 3:
      r.outcome = emit_result::status::queue_full;
      break;
    default:
      r.outcome = emit_result::status::refused;
      break;
  }
  r.first_id = v.elements[1].as_int().value_or(0);
  r.last_id = v.elements[2].as_int().value_or(0);
  return r;
}

std::optional<std::string> redis_node_store::take(const std::string& id,
                                                  std::chrono::milliseconds wait) {
  // BLMOVE takes seconds with decimals; the connection's socket timeout must exceed it.
  const std::string seconds = std::to_string(static_cast<double>(wait.count()) / 1000.0);
  const std::string processing = key(keys::processing_prefix) + id;
  const redis::value v = call({"BLMOVE", key(keys::queue), processing, "RIGHT", "LEFT", seconds});
  if (v.is_string()) return v.text;
  if (v.is_nil()) {
    // The queue stayed empty, and the caller holds nothing while it takes: whatever this
    // node's processing list holds belongs to no one here. It happens when the server
    // served a killed incarnation's blocked BLMOVE after this one had joined (and
    // returned the list): nobody else returns a live node's messages, so they go back.
    std::size_t returned = 0;
    while (call({"LMOVE", processing, key(keys::queue), "LEFT", "RIGHT"}).is_string()) ++returned;
    if (returned > 0)
      spdlog::info(
          "node {}: {} message(s) served to an earlier run of this node went back to the "
          "queue",
          id, returned);
  }
  return std::nullopt;
}

completion redis_node_store::complete(const std::string& id, const std::string& message,
                                      bool failed, const std::string& reason) {
  const redis::value v =
      call({"FCALL", "tgw_node_done", "4", key(keys::list), key(keys::processing_prefix) + id,
            key(keys::errors), key(keys::handled), id, message, failed ? "1" : "0", reason,
            record_handled_ ? "1" : "0"});
  return {v.as_int().value_or(0) == 1};
}

void redis_node_store::leave(const std::string& id) {
  (void)call({"FCALL", "tgw_node_leave", "5", key(keys::list), key(keys::ids), key(keys::emitter),
              key(keys::epoch), key(keys::queue), id, key(keys::processing_prefix)});
}

std::optional<std::vector<std::string>> redis_node_store::take_errors() {
  const redis::value v = call({"FCALL", "tgw_node_take_errors", "1", key(keys::errors)});
  if (!v.is_array()) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(v.elements.size());
  for (const redis::value& e : v.elements) out.push_back(e.text);
  return out;
}

}  // namespace tgw::infra::node
