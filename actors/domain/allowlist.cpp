#include "actors/domain/allowlist.hpp"

namespace tgw::domain {

allowlist::allowlist(std::unordered_set<std::string> imeis)
    : imeis_(std::make_shared<const std::unordered_set<std::string>>(std::move(imeis))) {}

std::shared_ptr<const std::unordered_set<std::string>> allowlist::current() const {
  const std::lock_guard lock(mutex_);
  return imeis_;
}

bool allowlist::admits(std::string_view imei) const {
  const auto imeis = current();
  return !imeis || imeis->contains(std::string(imei));
}

void allowlist::replace(std::unordered_set<std::string> imeis) {
  auto next = std::make_shared<const std::unordered_set<std::string>>(std::move(imeis));
  const std::lock_guard lock(mutex_);
  imeis_ = std::move(next);
}

std::size_t allowlist::size() const {
  const auto imeis = current();
  return imeis ? imeis->size() : 0;
}

}  // namespace tgw::domain
