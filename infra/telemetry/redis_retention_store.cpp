#include "infra/telemetry/redis_retention_store.hpp"

#include "infra/redis/failure_cause.hpp"
#include "infra/telemetry/retention.hpp"

namespace tgw::infra::telemetry {

std::optional<ports::retention_view> redis_retention_store::read(const std::string& stream,
                                                                 ports::store_failure& failure) {
  std::string error;
  auto view = read_retention(conn_, stream, error);
  if (!view) failure = redis::store_failure_of_text(error);
  return view;
}

std::optional<std::int64_t> redis_retention_store::trim_acknowledged(
    const std::string& stream, const ports::retention_view& view, ports::store_failure& failure) {
  std::string error;
  const auto removed = telemetry::trim_acknowledged(conn_, stream, view, error);
  if (!removed) failure = redis::store_failure_of_text(error);
  return removed;
}

std::optional<std::int64_t> redis_retention_store::trim_to_length(const std::string& stream,
                                                                  std::int64_t keep,
                                                                  ports::store_failure& failure) {
  std::string error;
  const auto removed = telemetry::trim_to_length(conn_, stream, keep, error);
  if (!removed) failure = redis::store_failure_of_text(error);
  return removed;
}

std::optional<ports::memory_use> redis_retention_store::memory() {
  return read_memory(conn_);
}

}  // namespace tgw::infra::telemetry
