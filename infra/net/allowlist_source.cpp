#include "infra/net/allowlist_source.hpp"

#include <mutex>

#include "codecs/imei.hpp"
#include "infra/net/allowlist.hpp"

namespace tgw::infra::net {
namespace {

class file_source final : public allowlist_source {
 public:
  explicit file_source(std::string path) : path_(std::move(path)) {}
  std::optional<std::unordered_set<std::string>> load(std::string& error) override {
    return load_allowlist(path_, error);
  }
  [[nodiscard]] std::string describe() const override { return "file " + path_; }

 private:
  std::string path_;
};

class redis_source final : public allowlist_source {
 public:
  explicit redis_source(redis::connection::options where) : redis_(std::move(where)) {}

  // SSCAN in pages rather than SMEMBERS: a million-device set is read without
  // holding Redis for the whole reply.
  std::optional<std::unordered_set<std::string>> load(std::string& error) override {
    const std::lock_guard lock(mutex_);  // SIGHUP and the periodic refresh may meet.
    std::unordered_set<std::string> imeis;
    std::string cursor = "0";
    do {
      const auto page = redis_.command({"SSCAN", allowed_devices_key, cursor, "COUNT", "10000"});
      if (page.is_error() || page.elements.size() != 2) {
        error = "cannot read the Redis SET " + std::string(allowed_devices_key) + ": " +
                (page.is_error() ? page.text : "unexpected reply");
        return std::nullopt;
      }
      cursor = page.elements[0].text;
      for (const auto& member : page.elements[1].elements) {
        codecs::imei parsed;
        if (codecs::imei::parse(member.text, parsed) != codecs::errc::ok) {
          error = "Redis SET " + std::string(allowed_devices_key) + " holds '" + member.text +
                  "', which is not an IMEI (15 or 16 digits)";
          return std::nullopt;
        }
        imeis.insert(member.text);
      }
    } while (cursor != "0");
    if (imeis.empty()) {
      error = "Redis SET " + std::string(allowed_devices_key) +
              " is empty or missing; an empty allowlist would let every device in: SADD "
              "IMEIs to it or drop --allowlist-redis";
      return std::nullopt;
    }
    return imeis;
  }
  [[nodiscard]] std::string describe() const override {
    return "Redis SET " + std::string(allowed_devices_key);
  }
  [[nodiscard]] bool polled() const override { return true; }

 private:
  std::mutex mutex_;
  redis::connection redis_;
};

}  // namespace

std::unique_ptr<allowlist_source> file_allowlist(std::string path) {
  return std::make_unique<file_source>(std::move(path));
}

std::unique_ptr<allowlist_source> redis_allowlist(redis::connection::options where) {
  return std::make_unique<redis_source>(std::move(where));
}

}  // namespace tgw::infra::net
