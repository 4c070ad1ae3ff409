#include "infra/telemetry/projection_rebuilder.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "infra/telemetry/telemetry_keys.hpp"

namespace tgw::infra::telemetry {
namespace {

bool failed(const redis::value& v, std::string& error) {
  if (!v.is_error()) return false;
  error = v.text;
  return true;
}

field_list pairs_of(const redis::value& flat) {
  field_list out;
  out.reserve(flat.elements.size() / 2);
  for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2)
    out.emplace_back(flat.elements[i].text, flat.elements[i + 1].text);
  return out;
}

}  // namespace

projection_rebuilder::projection_rebuilder(redis::connection::options where,
                                           redis::key_shards shards)
    : conn_(std::move(where)), shards_(std::move(shards)) {}

std::optional<std::vector<std::string>> projection_rebuilder::journaled_devices(
    std::size_t count, std::string& error) {
  std::vector<std::string> imeis;
  // On a cluster a journal key starts with its shard's tag: "{3.41}journal:<imei>".
  const std::string name = keys::journal("");
  const std::string pattern = shards_.tagged() ? "{*}" + name + "*" : name + "*";
  const std::size_t masters = conn_.master_count();
  if (masters == 0) {
    error = "the cluster's slot map cannot be loaded";
    return std::nullopt;
  }
  // A SCAN cursor belongs to one node: each master is walked to its end.
  for (std::size_t m = 0; m < masters; ++m) {
    std::string cursor = "0";
    do {
      const redis::value page = conn_.command_on_master(
          m, {"SCAN", cursor, "MATCH", pattern, "COUNT", std::to_string(count), "TYPE", "stream"});
      if (failed(page, error)) return std::nullopt;
      if (!page.is_array() || page.elements.size() != 2) {
        error = "unexpected SCAN reply";
        return std::nullopt;
      }
      cursor = page.elements[0].text;
      for (const redis::value& key : page.elements[1].elements) {
        const std::size_t at = key.text.find(name);
        if (at != std::string::npos) imeis.push_back(key.text.substr(at + name.size()));
      }
    } while (cursor != "0");
  }
  // SCAN may return a key more than once.
  std::sort(imeis.begin(), imeis.end());
  imeis.erase(std::unique(imeis.begin(), imeis.end()), imeis.end());
  return imeis;
}

std::string projection_rebuilder::range_start(const std::string& last_id) {
  // Exclusive start: continue after the last entry folded.
  return last_id.empty() ? "-" : "(" + last_id;
}

bool projection_rebuilder::fold_page(const redis::value& entries, std::size_t page,
                                     device_projection& p, std::string& last_id,
                                     std::uint64_t& events) {
  for (const redis::value& entry : entries.elements) {
    if (entry.elements.size() != 2) continue;
    telemetry::apply(p, pairs_of(entry.elements[1]));
    last_id = entry.elements[0].text;
    ++events;
  }
  return entries.elements.size() < page;
}

bool projection_rebuilder::rebuild_device(const std::string& imei, const rebuild_settings& s,
                                          rebuild_report& report, std::string& error) {
  const std::string& prefix = shards_.prefix_of(imei);
  const std::string journal = keys::journal(imei, prefix);
  const std::string device = keys::device(imei, prefix);
  device_projection folded;
  std::string last_id;
  std::uint64_t events = 0;
  for (int attempt = 0; attempt < s.max_attempts; ++attempt) {
    if (attempt > 0) {
      ++report.retries;
      spdlog::info("projections: {} changed during the fold; folding the new events", journal);
    }
    // A retry folds only what was appended since: the journal is append-only, and
    // trimming removes only entries already folded. So each attempt is short, and a
    // busy device is not starved by having to refold its whole journal every time.
    // WATCH, the first page and the current hash in one round trip: the shorter an
    // attempt, the likelier a busy device lets it through.
    const std::string count = std::to_string(s.page);
    std::vector<redis::value> first =
        conn_.pipeline({{"WATCH", journal},
                        {"XRANGE", journal, range_start(last_id), "+", "COUNT", count},
                        {"HGETALL", device}});
    for (const redis::value& r : first)
      if (failed(r, error)) return false;
    const redis::value& current = first[2];
    bool complete = fold_page(first[1], s.page, folded, last_id, events);
    while (!complete) {
      const redis::value entries =
          conn_.command({"XRANGE", journal, range_start(last_id), "+", "COUNT", count});
      if (failed(entries, error)) return false;
      complete = fold_page(entries, s.page, folded, last_id, events);
    }
    const field_list rebuilt = render(folded);
    auto diffs = compare(pairs_of(current), rebuilt);

    if (!s.dry_run && !diffs.empty()) {
      std::vector<std::vector<std::string>> commands = {{"MULTI"}, {"DEL", device}};
      if (!rebuilt.empty()) {
        std::vector<std::string> hset = {"HSET", device};
        for (const auto& [k, v] : rebuilt) {
          hset.push_back(k);
          hset.push_back(v);
        }
        commands.push_back(std::move(hset));
      }
      commands.push_back({"EXEC"});
      const std::vector<redis::value> replies = conn_.pipeline(commands);
      for (const redis::value& r : replies)
        if (failed(r, error)) return false;
      if (replies.back().is_nil()) continue;  // the journal changed under the fold
      ++report.projections_written;
    } else {
      // Nothing to write, yet a live update may have raced the comparison: the
      // differences reported must belong to one consistent state.
      const std::vector<redis::value> replies = conn_.pipeline({{"MULTI"}, {"EXEC"}});
      for (const redis::value& r : replies)
        if (failed(r, error)) return false;
      if (replies.back().is_nil()) continue;
    }
    spdlog::debug("projections: {}: {} events, {} differences", device, events, diffs.size());
    ++report.devices;
    report.events_read += events;
    report.differences += diffs.size();
    if (!diffs.empty()) report.differing.push_back({imei, std::move(diffs)});
    if (s.progress) s.progress(report);
    return true;
  }
  error = "journal of " + imei + " kept changing during " + std::to_string(s.max_attempts) +
          " rebuild attempts";
  return false;
}

std::optional<rebuild_report> projection_rebuilder::run(const rebuild_settings& s,
                                                        std::string& error) {
  if (!conn_.ensure_connected(error)) return std::nullopt;
  std::vector<std::string> imeis;
  if (!s.imei.empty()) {
    const redis::value exists =
        conn_.command({"EXISTS", keys::journal(s.imei, shards_.prefix_of(s.imei))});
    if (failed(exists, error)) return std::nullopt;
    if (exists.integer == 1) imeis.push_back(s.imei);
  } else {
    auto all = journaled_devices(s.page, error);
    if (!all) return std::nullopt;
    imeis = std::move(*all);
  }
  rebuild_report report;
  for (const std::string& imei : imeis)
    if (!rebuild_device(imei, s, report, error)) {
      conn_.command({"UNWATCH"});
      return std::nullopt;
    }
  return report;
}

}  // namespace tgw::infra::telemetry
