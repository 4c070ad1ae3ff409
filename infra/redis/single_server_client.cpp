#include "infra/redis/single_server_client.hpp"

namespace tgw::infra::redis {

value single_server_client::command(std::span<const std::string_view> argv) {
  std::string error;
  if (!ensure_connected(error)) return value::make_error("IO " + error);
  return link_.command(argv);
}

std::vector<value> single_server_client::pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  std::string error;
  if (!ensure_connected(error))
    return std::vector<value>(commands.size(), value::make_error("IO " + error));
  return link_.pipeline(commands);
}

std::vector<value> single_server_client::pipeline_encoded(std::string_view commands,
                                                          std::size_t count) {
  std::string error;
  if (!send_encoded(commands, error)) return std::vector<value>(count, value::make_error(error));
  return link_.receive_replies(count);
}

bool single_server_client::send_encoded(std::string_view commands, std::string& error) {
  if (!ensure_connected(error)) {
    error = "IO " + error;
    return false;
  }
  return link_.send_encoded(commands, error);
}

}  // namespace tgw::infra::redis
