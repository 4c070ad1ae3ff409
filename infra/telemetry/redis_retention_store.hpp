#pragma once

#include "actors/ports/retention_store.hpp"
#include "infra/redis/connection.hpp"

namespace tgw::infra::telemetry {

/// The retention port on one Redis connection (read_retention, trim_acknowledged,
/// trim_to_length, read_memory). Blocks; one instance per thread.
class redis_retention_store final : public ports::retention_store {
 public:
  explicit redis_retention_store(redis::connection::options where) : conn_(std::move(where)) {}

  std::optional<ports::retention_view> read(const std::string& stream,
                                            ports::store_failure& failure) override;
  std::optional<std::int64_t> trim_acknowledged(const std::string& stream,
                                                const ports::retention_view& view,
                                                ports::store_failure& failure) override;
  std::optional<std::int64_t> trim_to_length(const std::string& stream, std::int64_t keep,
                                             ports::store_failure& failure) override;
  std::optional<ports::memory_use> memory() override;

 private:
  redis::connection conn_;
};

}  // namespace tgw::infra::telemetry
