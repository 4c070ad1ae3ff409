#include "infra/replay/offline_replay.hpp"

#include <nlohmann/json.hpp>

namespace tgw::infra::replay {

std::string to_json_line(const replay_event& e) {
  // ordered_json keeps the journal's field order, so lines read like XRANGE output.
  nlohmann::ordered_json j;
  j["t_ms"] = e.t_ms;
  j["imei"] = e.imei;
  for (const auto& [k, v] : e.fields) j[k] = v;
  return j.dump();
}

}  // namespace tgw::infra::replay
