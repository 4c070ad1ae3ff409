#include "infra/registry/allowlist_set.hpp"

#include <mutex>

#include "codecs/imei.hpp"
#include "infra/redis/failure_cause.hpp"
#include "infra/registry/registry_keys.hpp"

namespace tgw::infra::registry {
namespace {

class redis_set_source final : public ports::allowlist_source {
 public:
  explicit redis_set_source(redis::connection::options where) : redis_(std::move(where)) {}

  // SSCAN in pages rather than SMEMBERS: a million-device set is read without
  // holding Redis for the whole reply.
  std::optional<std::unordered_set<std::string>> load(ports::store_failure& failure) override {
    const std::lock_guard lock(mutex_);  // SIGHUP and the periodic refresh may meet.
    std::unordered_set<std::string> imeis;
    std::string cursor = "0";
    do {
      const auto page = redis_.command({"SSCAN", keys::allowed_devices, cursor, "COUNT", "10000"});
      if (page.is_error() || page.elements.size() != 2) {
        failure = page.is_error()
                      ? redis::store_failure_of(
                            page.failure, page.text, {},
                            "cannot read the Redis SET " + std::string(keys::allowed_devices))
                      : redis::store_failure_of_text(
                            "unexpected reply", {},
                            "cannot read the Redis SET " + std::string(keys::allowed_devices));
        return std::nullopt;
      }
      cursor = page.elements[0].text;
      for (const auto& member : page.elements[1].elements) {
        codecs::imei parsed;
        if (codecs::imei::parse(member.text, parsed) != codecs::errc::ok) {
          failure.kind = ports::failure_kind::other;
          failure.cause = {"allowlist",
                           "Redis SET " + std::string(keys::allowed_devices) + " holds '" +
                               member.text + "', which is not an IMEI (15 or 16 digits)",
                           {}};
          return std::nullopt;
        }
        imeis.insert(member.text);
      }
    } while (cursor != "0");
    if (imeis.empty()) {
      failure.kind = ports::failure_kind::other;
      failure.cause = {"allowlist",
                       "Redis SET " + std::string(keys::allowed_devices) +
                           " is empty or missing; an empty allowlist would let every device in",
                       "SADD IMEIs to it or drop --allowlist-redis"};
      return std::nullopt;
    }
    return imeis;
  }
  [[nodiscard]] std::string describe() const override {
    return "Redis SET " + std::string(keys::allowed_devices);
  }
  [[nodiscard]] bool polled() const override { return true; }

 private:
  std::mutex mutex_;
  redis::connection redis_;
};

}  // namespace

std::unique_ptr<ports::allowlist_source> redis_allowlist(redis::connection::options where) {
  return std::make_unique<redis_set_source>(std::move(where));
}

}  // namespace tgw::infra::registry
