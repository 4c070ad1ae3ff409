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

infra::telemetry::retention_view retention_status::view() const {
  const std::lock_guard lock(mutex_);
  return view_;
}

std::int64_t retention_status::trimmed_total() const {
  const std::lock_guard lock(mutex_);
  return trimmed_total_;
}

caf::behavior retention_actor(caf::event_based_actor* self, const retention_config& config,
                              const std::shared_ptr<infra::redis::connection>& conn,
                              const std::shared_ptr<retention_status>& status) {
  self->delayed_send(self, config.interval, retain_atom::value);
  return {
      [self, config, conn, status](retain_atom) {
        const std::string stream = infra::telemetry::keys::telemetry_stream;
        std::string error;
        auto view = infra::telemetry::read_retention(*conn, stream, error);
        if (!view) {
          spdlog::warn("telemetry retention: cannot read {}: {}", stream, error);
        } else {
          std::int64_t trimmed = 0;
          if (config.trim) {
            const auto removed = infra::telemetry::trim_acknowledged(*conn, stream, *view, error);
            if (!removed)
              spdlog::warn("telemetry retention: trim failed: {}", error);
            else
              trimmed = *removed;
            if (trimmed > 0)
              spdlog::debug("telemetry retention: {} entries every group acknowledged trimmed",
                            trimmed);
          }
          view->length -= trimmed;
          status->update(std::move(*view), trimmed);
        }
        self->delayed_send(self, config.interval, retain_atom::value);
      },
  };
}

}  // namespace tgw::actors::gateway
