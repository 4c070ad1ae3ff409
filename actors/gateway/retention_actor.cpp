#include "actors/gateway/retention_actor.hpp"

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/gateway/gateway_messages.hpp"
#include "infra/telemetry/telemetry_store.hpp"

namespace tgw::actors::gateway {

void retention_status::update(infra::telemetry::retention_view view, std::int64_t trimmed) {
  const std::lock_guard lock(mutex_);
  view_ = std::move(view);
  trimmed_total_ += trimmed;
}

void retention_status::add_trimmed(std::int64_t trimmed) {
  const std::lock_guard lock(mutex_);
  trimmed_total_ += trimmed;
}

infra::telemetry::retention_view retention_status::view() const {
  const std::lock_guard lock(mutex_);
  return view_;
}

std::int64_t retention_status::trimmed_total() const {
  const std::lock_guard lock(mutex_);
  return trimmed_total_;
}

retention_actor::behavior_type retention(retention_actor::pointer self,
                                         const retention_config& config,
                                         const std::shared_ptr<infra::redis::connection>& conn,
                                         const std::shared_ptr<retention_status>& status) {
  self->delayed_send(self, config.interval, retain_atom::value);
  return {
      [self, config, conn, status](retain_atom) {
        std::vector<infra::telemetry::retention_view> views;
        std::int64_t trimmed_total = 0;
        for (const std::string& stream : config.streams) {
          std::string error;
          auto view = infra::telemetry::read_retention(*conn, stream, error);
          if (!view) {
            spdlog::warn("telemetry retention: cannot read {}: {}", stream, error);
            break;
          }
          std::int64_t trimmed = 0;
          if (config.trim) {
            const auto removed = infra::telemetry::trim_acknowledged(*conn, stream, *view, error);
            if (!removed)
              spdlog::warn("telemetry retention: trim of {} failed: {}", stream, error);
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
          status->update(
              views.size() == 1 ? std::move(views.front()) : infra::telemetry::combine(views),
              trimmed_total);
        else
          status->add_trimmed(trimmed_total);
        self->delayed_send(self, config.interval, retain_atom::value);
      },
  };
}

}  // namespace tgw::actors::gateway
