#include "actors/commands/session_directory.hpp"

namespace tgw::actors::commands {

void session_directory::attach(const std::string& imei, const caf::actor& session) {
  const std::lock_guard lock(mutex_);
  sessions_[imei] = session;
}

void session_directory::detach(const std::string& imei, const caf::actor& session) {
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(imei);
  if (it != sessions_.end() && it->second == session) sessions_.erase(it);
}

caf::actor session_directory::find(const std::string& imei) const {
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(imei);
  return it == sessions_.end() ? caf::actor{} : it->second;
}

std::size_t session_directory::size() const {
  const std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::vector<std::pair<std::string, caf::actor>> session_directory::snapshot() const {
  const std::lock_guard lock(mutex_);
  return {sessions_.begin(), sessions_.end()};
}

}  // namespace tgw::actors::commands
