#include "actors/gateway/retention_actor.hpp"

#include <map>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_atoms.hpp"

namespace tgw::actors::gateway {

void retention_status::update(ports::retention_view view, std::int64_t trimmed) {
  const std::lock_guard lock(mutex_);
  view_ = std::move(view);
  trimmed_total_ += trimmed;
}

void retention_status::add_trimmed(std::int64_t trimmed) {
  const std::lock_guard lock(mutex_);
  trimmed_total_ += trimmed;
}

ports::retention_view retention_status::view() const {
  const std::lock_guard lock(mutex_);
  return view_;
}

std::int64_t retention_status::trimmed_total() const {
  const std::lock_guard lock(mutex_);
  return trimmed_total_;
}

namespace {

using clock = std::chrono::steady_clock;

// When each ungrouped stream was last said at warn.
using warned_at = std::map<std::string, clock::time_point>;

std::string megabytes(std::int64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

// A stream with no consumer group: nobody has said what it has read, so nothing is
// trimmed by groups, and left alone it grows until Redis refuses every write (and the
// XGROUP CREATE of the consumer meant to drain it). Held to the floor, with a warning
// while it nears it. Returns the entries trimmed.
std::int64_t hold_ungrouped(const retention_config& config, ports::retention_store& store,
                            const std::string& stream, const ports::retention_view& view,
                            const std::optional<ports::memory_use>& memory, warned_at& warned) {
  const auto now = clock::now();
  const std::string redis_memory =
      memory && memory->max > 0 ? fmt::format("; Redis uses {} of its maxmemory {}",
                                              megabytes(memory->used), megabytes(memory->max))
                                : std::string();
  if (domain::ungrouped_nearing_floor(view, config.ungrouped, memory)) {
    auto [it, first] = warned.try_emplace(stream, now);
    if (first || now - it->second >= config.warn_interval) {
      it->second = now;
      spdlog::warn(
          "telemetry retention: {} has no consumer group and holds {} entries ({}){}; "
          "nobody reads them, so {}: start its consumer (tgw sink postgres) or create its "
          "group (XGROUP CREATE {} NAME 0)",
          stream, view.length, megabytes(view.bytes), redis_memory,
          config.trim ? fmt::format("the oldest go past {} entries (--telemetry-ungrouped-maxlen) "
                                    "or when Redis nears its maxmemory",
                                    config.ungrouped.maxlen)
                      : std::string("with --telemetry-retention off they stay until Redis "
                                    "refuses every write"),
          stream);
    }
  } else {
    warned.erase(stream);
  }
  if (!config.trim) return 0;
  const std::int64_t keep = domain::ungrouped_keep(view, config.ungrouped, memory);
  if (keep >= view.length) return 0;
  ports::store_failure failure;
  const auto removed = store.trim_to_length(stream, keep, failure);
  if (!removed) {
    spdlog::warn("telemetry retention: trim of {} (no consumer group) failed: {}", stream,
                 failure.text());
    return 0;
  }
  spdlog::warn(
      "telemetry retention: {} has no consumer group: its oldest {} entries trimmed ({}){}", stream,
      *removed,
      keep < config.ungrouped.maxlen || config.ungrouped.maxlen == 0
          ? std::string("Redis was near its maxmemory")
          : fmt::format("past {} entries, --telemetry-ungrouped-maxlen", config.ungrouped.maxlen),
      redis_memory);
  return *removed;
}

}  // namespace

retention_actor::behavior_type retention(retention_actor::pointer self,
                                         const retention_config& config,
                                         const std::shared_ptr<ports::retention_store>& store,
                                         const std::shared_ptr<retention_status>& status) {
  self->delayed_send(self, config.interval, retain_atom::value);
  auto warned = std::make_shared<warned_at>();
  return {
      [self, config, store, status, warned](retain_atom) {
        std::vector<ports::retention_view> views;
        std::int64_t trimmed_total = 0;
        std::optional<std::optional<ports::memory_use>> memory;  // read once a pass
        for (const std::string& stream : config.streams) {
          ports::store_failure failure;
          auto view = store->read(stream, failure);
          if (!view) {
            spdlog::warn("telemetry retention: cannot read {}: {}", stream, failure.text());
            break;
          }
          std::int64_t trimmed = 0;
          if (view->groups.empty() && view->length > 0) {
            if (!memory) memory = store->memory();
            trimmed = hold_ungrouped(config, *store, stream, *view, *memory, *warned);
          } else if (config.trim) {
            const auto removed = store->trim_acknowledged(stream, *view, failure);
            if (!removed)
              spdlog::warn("telemetry retention: trim of {} failed: {}", stream, failure.text());
            else
              trimmed = *removed;
            if (trimmed > 0)
              spdlog::debug(
                  "telemetry retention: {} entries of {} every group acknowledged trimmed", trimmed,
                  stream);
          }
          view->length -= trimmed;
          trimmed_total += trimmed;
          views.push_back(std::move(*view));
        }
        // A pass that could not read every stream leaves the last full view standing.
        if (views.size() == config.streams.size())
          status->update(views.size() == 1 ? std::move(views.front()) : domain::combine(views),
                         trimmed_total);
        else
          status->add_trimmed(trimmed_total);
        self->delayed_send(self, config.interval, retain_atom::value);
      },
  };
}

}  // namespace tgw::actors::gateway
