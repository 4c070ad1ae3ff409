#include "infra/telemetry/memory_telemetry_store.hpp"

#include <cstdlib>

namespace tgw::infra::telemetry {
namespace {

// Record field positions in record_fields.
constexpr std::size_t ts = 0;
constexpr std::size_t lon = 2;
constexpr std::size_t lat = 3;
constexpr std::size_t satellites = 6;
constexpr std::size_t speed = 7;

}  // namespace

memory_telemetry_store::memory_telemetry_store(std::string instance,
                                               std::function<std::int64_t()> clock_ms)
    : instance_(std::move(instance)), clock_ms_(std::move(clock_ms)) {}

std::vector<write_outcome> memory_telemetry_store::write_batch(const std::vector<write_op>& ops) {
  // One clock read per batch, as the Redis function reads TIME once per call.
  const std::int64_t now = clock_ms_();
  std::vector<write_outcome> out;
  out.reserve(ops.size());
  for (const write_op& op : ops) {
    if (op.is_packet) {
      out.push_back(persist(op.packet, now));
      continue;
    }
    if (op.event.known_only && !devices_.contains(op.event.imei)) {
      write_outcome unknown{true, false, 0, {}};
      unknown.unknown_device = true;
      out.push_back(unknown);
      continue;
    }
    field_list fields{
        {"type", op.event.type}, {"at_ms", std::to_string(now)}, {"instance", instance_}};
    fields.insert(fields.end(), op.event.fields.begin(), op.event.fields.end());
    append(op.event.imei, std::move(fields));
    out.push_back(write_outcome{true, false, 0, {}});
  }
  return out;
}

write_outcome memory_telemetry_store::persist(const packet_job& job, std::int64_t now) {
  const std::string n = std::to_string(job.records.size());
  const auto known = devices_.find(job.imei);
  if (known != devices_.end() && recently_accepted(known->second, job.fingerprint)) {
    append(job.imei, {{"type", "packet_resent"},
                      {"at_ms", std::to_string(now)},
                      {"instance", instance_},
                      {"fingerprint", job.fingerprint},
                      {"records", n}});
    return write_outcome{true, true, 0, {}};
  }
  records_stored_ += job.records.size();
  // The newest record is the first one with the greatest timestamp, as in the Lua.
  const record_fields* newest = nullptr;
  for (const record_fields& r : job.records)
    if (newest == nullptr ||
        std::strtod(r[ts].c_str(), nullptr) > std::strtod((*newest)[ts].c_str(), nullptr))
      newest = &r;
  static const record_fields none{};
  const record_fields& pos = newest != nullptr ? *newest : none;
  append(job.imei, {{"type", "records_accepted"},
                    {"at_ms", std::to_string(now)},
                    {"instance", instance_},
                    {"fingerprint", job.fingerprint},
                    {"records", n},
                    {"first_ts", job.records.empty() ? "" : job.records.front()[ts]},
                    {"last_ts", job.records.empty() ? "" : job.records.back()[ts]},
                    {"pos_ts", pos[ts]},
                    {"lon", pos[lon]},
                    {"lat", pos[lat]},
                    {"speed", pos[speed]},
                    {"satellites", pos[satellites]}});
  return write_outcome{true, false, static_cast<std::int64_t>(job.records.size()), {}};
}

void memory_telemetry_store::append(const std::string& imei, field_list fields) {
  telemetry::apply(devices_[imei], fields);
  journal_.push_back(journal_entry{imei, std::move(fields)});
}

const device_projection* memory_telemetry_store::device(const std::string& imei) const {
  const auto it = devices_.find(imei);
  return it == devices_.end() ? nullptr : &it->second;
}

}  // namespace tgw::infra::telemetry
