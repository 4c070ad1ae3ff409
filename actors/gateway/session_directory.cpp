#include "actors/gateway/session_directory.hpp"

#include <spdlog/spdlog.h>

#include "codecs/imei.hpp"

namespace tgw::actors::gateway {

void session_directory::attach(const std::string& imei, const session_actor& session) {
  const auto key = codecs::imei_key(imei);
  if (!key) {
    // Sessions attach only after the IMEI was validated.
    spdlog::error("commands: session for '{}' not attached: not an IMEI", imei);
    return;
  }
  const std::lock_guard lock(mutex_);
  sessions_[*key] = session;
}

void session_directory::detach(const std::string& imei, const session_actor& session) {
  const auto key = codecs::imei_key(imei);
  if (!key) return;
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(*key);
  if (it != sessions_.end() && it->second == session) sessions_.erase(it);
}

session_actor session_directory::find(const std::string& imei) const {
  const auto key = codecs::imei_key(imei);
  if (!key) return {};  // a command for something that is no IMEI has no session
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(*key);
  return it == sessions_.end() ? session_actor{} : it->second;
}

commands::command_target_actor session_directory::command_target(const std::string& imei) const {
  return find(imei);
}

std::size_t session_directory::size() const {
  const std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::vector<std::pair<std::string, session_actor>> session_directory::snapshot() const {
  std::vector<std::pair<std::uint64_t, session_actor>> held;
  {
    const std::lock_guard lock(mutex_);
    held.assign(sessions_.begin(), sessions_.end());
  }
  std::vector<std::pair<std::string, session_actor>> out;
  out.reserve(held.size());
  for (auto& [key, session] : held)
    out.emplace_back(codecs::imei_from_key(key), std::move(session));
  return out;
}

}  // namespace tgw::actors::gateway
