#include "infra/redis/single_server_client.hpp"

namespace tgw::infra::redis {

value single_server_client::command(std::span<const std::string_view> argv) {
  std::string error;
  if (!ensure_connected(error)) return value::make_unreachable(error);
  return link_.command(argv);
}

std::vector<value> single_server_client::pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  std::string error;
  if (!ensure_connected(error))
    return std::vector<value>(commands.size(), value::make_unreachable(error));
  return link_.pipeline(commands);
}

bool single_server_client::send_encoded_to(std::size_t index, std::string_view commands,
                                           value& failed, bool& sent) {
  // One server: a failed attempt counts as sent, as a partial write may have run.
  sent = true;
  if (index != 0) {
    failed = value::make_unreachable("no master " + std::to_string(index) + " on one server");
    return false;
  }
  std::string error;
  if (!ensure_connected(error)) {
    failed = value::make_unreachable(error);
    return false;
  }
  return link_.send_encoded(commands, failed);
}

}  // namespace tgw::infra::redis
