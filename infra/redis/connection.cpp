#include "infra/redis/connection.hpp"

#include "infra/redis/cluster_client.hpp"
#include "infra/redis/direct_client.hpp"
#include "infra/redis/sentinel_client.hpp"

namespace tgw::infra::redis {

std::unique_ptr<client> make_client(client_options opts) {
  if (opts.where.via_cluster()) return std::make_unique<cluster_client>(std::move(opts));
  if (opts.where.via_sentinel()) return std::make_unique<sentinel_client>(std::move(opts));
  return std::make_unique<direct_client>(std::move(opts));
}

connection::connection(options opts) : opts_(opts), client_(make_client(std::move(opts))) {}

connection::~connection() = default;

value connection::command(const std::vector<std::string>& argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  return client_->command(std::span<const std::string_view>(views));
}

std::vector<value> connection::pipeline_encoded_to(std::size_t index, std::string_view commands,
                                                   std::size_t count, bool& sent) {
  value failed;
  if (client_->send_encoded_to(index, commands, failed, sent))
    return client_->receive_from(index, count);
  // A master that took nothing may have been replaced: a cluster reloads its map.
  if (!sent) client_->learn(failed);
  return std::vector<value>(count, failed);
}

}  // namespace tgw::infra::redis
